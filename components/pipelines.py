"""The Pipelines tab: the book's chapter 1 tasks on a complaint letter, and what serves them.

One sub-tab per task. Each handler passes the widgets' values (and the model box, as an
override) to `backend.pipelines`, which loads the task's model itself, and formats the plain
result: a badge saying which checkpoint served it (its source, method and time), a plot or
highlight where a person would rather look than read, and the raw JSON (the API contract).
"""

from __future__ import annotations

import gradio as gr

from backend import pipelines
from components import pipelines_plots as show
from components.common import LONG_LANE, MODEL_QUEUE, Checkbox, Dropdown, Number, Radio, Slider, Textbox, model_box, user_errors
from components.pipelines_examples import (
    LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, PRAISE, QUESTION, REPLY_PROMPT,
)

LANGUAGES = [("English", "en"), ("German", "de"), ("French", "fr"), ("Spanish", "es"),
             ("Italian", "it"), ("Dutch", "nl")]
MODEL_BOX_INFO = ("Empty: the profile's model. Or a Hugging Face Hub id, or a local directory "
                  "saved with save_pretrained().")


# ---------------------------------------------------------------------------- handlers

@user_errors
def run_classify(text, batch, label_descriptions, model_box, progress=gr.Progress()):
    r = pipelines.classify(text, batch, label_descriptions, override=model_box, progress=progress)
    return show.badge(r), show.label_bars(r["results"], "Label scores"), show.label_table(r["results"]), r


@user_errors
def run_zero_shot(text, labels, multi_label, template, batch, model_box, progress=gr.Progress()):
    r = pipelines.zero_shot(text, labels, multi_label, template, batch, override=model_box, progress=progress)
    title = "Independent label scores (multi-label)" if r["multi_label"] else "Label scores (sum to 1)"
    return show.badge(r), show.label_bars(r["results"], title), show.label_table(r["results"]), r


@user_errors
def run_ner(text, aggregation, batch, model_box, progress=gr.Progress()):
    r = pipelines.ner(text, aggregation, batch, override=model_box, progress=progress)
    res = r["results"]
    highlight = show.entity_highlight([x["text"] for x in res], [x["entities"] for x in res])
    return show.badge(r), highlight, show.entity_rows(res), r


@user_errors
def run_qa(context, question, top_n, model_box, progress=gr.Progress()):
    r = pipelines.qa(context, question, top_n, override=model_box, progress=progress)
    return show.badge(r), show.answer_markdown(r), show.answer_highlight(r), show.answer_rows(r), r


@user_errors
def run_summarize(text, max_new_tokens, min_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    r = pipelines.summarize(text, max_new_tokens, min_new_tokens, num_beams, reference,
                            override=model_box, progress=progress)
    return show.badge(r), r["summary"], show.rouge_bars(r.get("rouge")), r


@user_errors
def run_translate(text, source, target, max_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    r = pipelines.translate(text, source, target, max_new_tokens, num_beams, reference,
                            override=model_box, progress=progress)
    return show.badge(r), r["translation"], show.bleu_line(r), r


@user_errors
def run_fill_mask(text, top_k, model_box, progress=gr.Progress()):
    r = pipelines.fill_mask(text, top_k, override=model_box, progress=progress)
    return show.badge(r), show.mask_bars(r["candidates"]), show.mask_rows(r["candidates"]), r


@user_errors
def run_generate(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box,
                 progress=gr.Progress()):
    r = pipelines.generate_text(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed,
                                override=model_box, progress=progress)
    return show.badge(r), r["generated_text"], r


# ------------------------------------------------------------------------------- build

def _model_box(task: str):
    return model_box(elem_id=f"pl-{task}-model", info=MODEL_BOX_INFO)


def _json(task: str):
    return gr.JSON(label="Result (JSON, as the API returns it)", open=False, elem_id=f"pl-{task}-json")


def _batch_box():
    return Checkbox(label="Batch mode: one text per line", value=False)


def _build_classify() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=LETTER)
            batch = _batch_box()
            desc = Textbox(label="Label descriptions (embedding-similarity method only)", lines=2,
                              value=pipelines.SENTIMENT_DEFAULT,
                              info="LABEL: description, one per line. A dedicated classifier ignores them.")
            model = _model_box("classify")
            go_btn = gr.Button("Classify", variant="primary", elem_id="pl-classify-run")
            gr.Examples([[LETTER, False], [PRAISE, False], ["\n".join([LETTER, PRAISE, QUESTION]), True]],
                        [text, batch], example_labels=["The complaint letter", "A happy customer",
                                                       "Batch: three messages"], cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-classify-badge")
            plot = gr.Plot(label="Label scores", elem_id="pl-classify-plot")
            table = gr.Dataframe(headers=show.LABEL_HEADERS, label="Per text", wrap=True)
            out = _json("classify")
    go_btn.click(run_classify, [text, batch, desc, model], [badge, plot, table, out],
                 api_name="classify", **MODEL_QUEUE)


def _build_zero_shot() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=LETTER)
            labels = Textbox(label="Candidate labels (comma-separated)",
                                value="complaint, praise, question, wrong item delivered")
            multi = Checkbox(label="Multi-label: score each label on its own", value=False)
            template = Textbox(label="Hypothesis / description template", value=pipelines.DEFAULT_TEMPLATE,
                                  info="NLI models: the hypothesis. Embedding method: the label's description.")
            batch = _batch_box()
            model = _model_box("zero_shot")
            go_btn = gr.Button("Classify", variant="primary", elem_id="pl-zero_shot-run")
            gr.Examples([[LETTER, "complaint, praise, question, wrong item delivered", False],
                         [QUESTION, "shipping, product availability, refund, praise", True]],
                        [text, labels, multi], example_labels=["The complaint letter", "A question, multi-label"],
                        cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-zero_shot-badge")
            plot = gr.Plot(label="Label scores", elem_id="pl-zero_shot-plot")
            table = gr.Dataframe(headers=show.LABEL_HEADERS, label="Per text", wrap=True)
            out = _json("zero_shot")
    go_btn.click(run_zero_shot, [text, labels, multi, template, batch, model], [badge, plot, table, out],
                 api_name="zero_shot", **MODEL_QUEUE)


def _build_ner() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=LETTER)
            agg = Radio(["simple", "first", "average", "max", "none"], value="simple",
                           label="Aggregation of sub-word tokens (dedicated models)")
            batch = _batch_box()
            model = _model_box("ner")
            go_btn = gr.Button("Find entities", variant="primary", elem_id="pl-ner-run")
            gr.Examples([[LETTER, False], ["\n".join([LETTER_START, PRAISE, QUESTION]), True]], [text, batch],
                        example_labels=["The complaint letter", "Batch: three messages"], cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-ner-badge")
            hl = gr.HighlightedText(label="Entities in the text", show_legend=True, elem_id="pl-ner-highlight")
            table = gr.Dataframe(headers=["#", "type", "entity", "score", "start", "end"], label="Entities")
            out = _json("ner")
    go_btn.click(run_ner, [text, agg, batch, model], [badge, hl, table, out], api_name="ner", **LONG_LANE)


def _build_qa() -> None:
    with gr.Row():
        with gr.Column():
            context = Textbox(label="Context", lines=6, value=LETTER)
            question = Textbox(label="Question", value="What does the customer want?")
            top_n = Slider(1, 10, value=3, step=1, label="Top-n answer spans")
            model = _model_box("qa")
            go_btn = gr.Button("Answer", variant="primary", elem_id="pl-qa-run")
            gr.Examples([[LETTER, "What does the customer want?"], [LETTER, "Where was the figure ordered from?"],
                         [LETTER, "What is the order number?"]], [context, question],
                        example_labels=["What does the customer want?", "Where from?", "Order number?"],
                        cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-qa-badge")
            answer = gr.Markdown(elem_id="pl-qa-answer")
            hl = gr.HighlightedText(label="Answer in the context", show_legend=True, elem_id="pl-qa-highlight")
            table = gr.Dataframe(headers=["rank", "answer", "score", "start", "end", "match"], label="Top-n spans")
            out = _json("qa")
    go_btn.click(run_qa, [context, question, top_n, model], [badge, answer, hl, table, out],
                 api_name="qa", **LONG_LANE)


def _build_summarize() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=LETTER)
            with gr.Row():
                max_new = Slider(8, 256, value=60, step=1, label="Max new tokens")
                min_new = Slider(0, 128, value=10, step=1, label="Min new tokens")
                beams = Slider(0, 8, value=0, step=1, label="Beams (0 = the checkpoint's default)")
            reference = Textbox(label="Reference summary (optional: gives ROUGE)", lines=2, value=LETTER_SUMMARY)
            model = _model_box("summarize")
            go_btn = gr.Button("Summarize", variant="primary", elem_id="pl-summarize-run")
            gr.Examples([[LETTER, LETTER_SUMMARY]], [text, reference], example_labels=["The complaint letter"],
                        cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-summarize-badge")
            summary = Textbox(label="Summary", lines=4, interactive=False, elem_id="pl-summarize-output")
            plot = gr.Plot(label="ROUGE", elem_id="pl-summarize-plot")
            out = _json("summarize")
    go_btn.click(run_summarize, [text, max_new, min_new, beams, reference, model], [badge, summary, plot, out],
                 api_name="summarize", **LONG_LANE)


def _build_translate() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=4, value=LETTER_START)
            with gr.Row():
                src = Dropdown(LANGUAGES, value="en", label="From")
                tgt = Dropdown(LANGUAGES, value="de", label="To")
            with gr.Row():
                max_new = Slider(8, 400, value=120, step=1, label="Max new tokens")
                beams = Slider(0, 8, value=0, step=1, label="Beams (0 = the checkpoint's default)")
            reference = Textbox(label="Reference translation (optional: gives BLEU)", lines=2,
                                   value=LETTER_GERMAN_START)
            model = _model_box("translate")
            go_btn = gr.Button("Translate", variant="primary", elem_id="pl-translate-run")
            gr.Examples([[LETTER_START, LETTER_GERMAN_START]], [text, reference],
                        example_labels=["The letter's first sentence"], cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-translate-badge")
            translation = Textbox(label="Translation", lines=4, interactive=False, elem_id="pl-translate-output")
            pair = gr.Markdown(elem_id="pl-translate-pair")
            out = _json("translate")
    go_btn.click(run_translate, [text, src, tgt, max_new, beams, reference, model], [badge, translation, pair, out],
                 api_name="translate", **LONG_LANE)


def _build_generate_text() -> None:
    with gr.Row():
        with gr.Column():
            prompt = Textbox(label="Prompt", lines=6, value=REPLY_PROMPT)
            strategy = Radio(["greedy", "sample", "beam"], value="greedy", label="Strategy")
            with gr.Row():
                max_new = Slider(1, 256, value=48, step=1, label="Max new tokens")
                temperature = Slider(0.05, 2.0, value=0.7, step=0.05, label="Temperature")
                beams = Slider(1, 8, value=4, step=1, label="Beams")
            with gr.Row():
                top_k = Slider(0, 200, value=50, step=1, label="Top-k (0 = off)")
                top_p = Slider(0.05, 1.0, value=0.9, step=0.05, label="Top-p")
                seed = Number(value=0, precision=0, label="Seed")
            model = _model_box("generate_text")
            go_btn = gr.Button("Generate", variant="primary", elem_id="pl-generate_text-run")
            gr.Examples([[REPLY_PROMPT]], [prompt], example_labels=["Reply to the letter"], cache_examples=False)
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-generate_text-badge")
            generated = Textbox(label="Generated text", lines=10, interactive=False,
                                   elem_id="pl-generate_text-output")
            out = _json("generate_text")
    go_btn.click(run_generate, [prompt, strategy, max_new, temperature, top_k, top_p, beams, seed, model],
                 [badge, generated, out], api_name="generate_text", **LONG_LANE)


def _build_fill_mask() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text with one [MASK]", lines=3,
                              value="I ordered a Megatron action [MASK] from your online store.")
            top_k = Slider(1, 20, value=5, step=1, label="Top-k tokens")
            model = _model_box("fill_mask")
            go_btn = gr.Button("Fill", variant="primary", elem_id="pl-fill_mask-run")
            gr.Examples([["I ordered a Megatron action [MASK] from your online store."],
                         ["Instead I found an Optimus [MASK] figure in the parcel."]], [text],
                        example_labels=["Megatron action [MASK]", "Optimus [MASK]"], cache_examples=False)
            gr.Markdown("Fill-mask needs a masked language model (the book's is BERT). None ships "
                        "with the `local` profile: enter a Hub id or a local directory above.")
        with gr.Column():
            badge = gr.Markdown(elem_id="pl-fill_mask-badge")
            plot = gr.Plot(label="Top-k tokens", elem_id="pl-fill_mask-plot")
            table = gr.Dataframe(headers=["token", "probability", "sequence"], label="Candidates", wrap=True)
            out = _json("fill_mask")
    go_btn.click(run_fill_mask, [text, top_k, model], [badge, plot, table, out], api_name="fill_mask",
                 **MODEL_QUEUE)


SUBTABS = [
    ("Text classification", _build_classify),
    ("Zero-shot", _build_zero_shot),
    ("Named entities", _build_ner),
    ("Question answering", _build_qa),
    ("Summarization", _build_summarize),
    ("Translation", _build_translate),
    ("Text generation", _build_generate_text),
    ("Fill-mask", _build_fill_mask),
]


def build() -> None:
    """Sub-tabs for the eight tasks, wired to their api_names."""
    gr.Markdown(
        "The book opens by running `pipeline()` on a customer's complaint letter. Each task below "
        "shows which checkpoint served it, where it came from and how long it took. Offline "
        "(`local` profile), classification is done by **embedding similarity** and NER, QA, "
        "summarization and translation by an **instruct-model fallback**: said next to each result."
    )
    with gr.Tabs():
        for name, build_task in SUBTABS:
            with gr.Tab(name):
                build_task()
