"""The Pipelines tab: the book's chapter 1 tasks on a complaint letter, and what serves them.

One sub-tab per task. Each handler passes the widgets' values (and the model box, as an
override) to `backend.pipelines`, which loads the task's model itself, and formats the plain
result: a badge saying which checkpoint served it (its source, method and time), a plot or
highlight where a person would rather look than read, and the raw JSON (the API contract).
"""

from __future__ import annotations

import json

import gradio as gr

from backend.pipelines.contracts import CONTRACTS
from backend import pipelines
from components.shell import code_view, lifecycle, links, runs
from components.pipelines import plots as show
from components.shell import (
    BATCH_LANE, LONG_LANE, SHORT_LANE, Checkbox, Dropdown, Number, Radio, Slider, Textbox, server_lane, error_box,
    model_box, raw_json,
)
from components.shell.endpoint import Code, Endpoint, Link, Runs, declare
from components.pipelines.intro import intro_markdown
from components.pipelines.examples import (
    LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, MASK_EXAMPLES, NER_EXAMPLE, NER_EXAMPLE_2, PRAISE,
    QA_CONTEXT, QA_QUESTIONS, QUESTION, REPLY_PROMPT, SUMMARY_EXAMPLE, SUMMARY_REFERENCE, EIFFEL, EIFFEL_SUMMARY,
)
from components.pipelines.examples import RHINE, RHINE_LABELS, RHINE_QUESTIONS
from components.pipelines.handlers import (
    LANGUAGES, MODEL_BOX_INFO, _generation_plan, _summary_plan, _translation_plan, run_classify, run_fill_mask,
    run_generate, run_ner, run_qa, run_summarize, run_translate, run_zero_shot, stream_generate,
)
from components.pipelines.references import (REFERENCE_NOTE, SUMMARY_PAIRS, TRANSLATION_PAIRS, _link_reference)


# ---------------------------------------------------------------------------- handlers


# The knobs each generation strategy uses; the others are greyed out (they would do nothing).
STRATEGY_KNOBS = {"greedy": set(), "sample": {"temperature", "top_k", "top_p", "seed"}, "beam": {"num_beams"}}
KNOB_ORDER = ("temperature", "top_k", "top_p", "num_beams", "seed")
PROSE_HIGHLIGHT = ["tlab-prose-highlight"]  # highlighted prose wraps between words (figures.css), never inside one


def _knobs_for(strategy):
    used = STRATEGY_KNOBS.get(strategy, set(KNOB_ORDER))
    return [gr.update(interactive=k in used) for k in KNOB_ORDER]


# ------------------------------------------------------------------------------- build

MULTILINGUAL_NER_INFO = ("Type 'multilingual' (or 'multilingual-de': trained on German only) for chapter 4's model: "
                         "the multilingual encoder fine-tuned here for NER in German, French, Italian and English.")
MULTILINGUAL_EXAMPLES = ["Angela Merkel besuchte am Montag die Firma Siemens in München.",
                         "Emmanuel Macron a rencontré les dirigeants de Renault à Lyon.",
                         "Il presidente Sergio Mattarella ha visitato la Barilla a Parma."]


def _model_box(task: str):
    return model_box(elem_id=f"pl-{task}-model", info=MODEL_BOX_INFO)


def _json(task: str):
    out = raw_json(elem_id=f"pl-{task}-json")  # collapsed: the formatted result comes first
    _CODE[task] = code_view.view(f"pl-{task}")  # "The same in Python", under the raw result
    return out


_CODE: dict = {}  # each task's code view while build() runs


def _batch_box():
    return Checkbox(label="Batch mode: one text per line", value=False)


def _build_classify() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=LETTER)
            batch = _batch_box()
            desc = Textbox(label="Label descriptions (embedding-similarity method only)", lines=2,
                           value=pipelines.SENTIMENT_DEFAULT,
                           info="LABEL: description, one per line. Used only when the model box names an "
                                "embedding model; a trained classifier (offline: MiniLM fine-tuned on the shipped "
                                "sentiment set) ignores them.")
            model = _model_box("classify")
            go_btn = gr.Button("Classify", variant="primary", elem_id="pl-classify-run")
            _see_it_elsewhere(text)
            gr.Examples([[LETTER, False], [PRAISE, False], ["\n".join([LETTER, PRAISE, QUESTION]), True]],
                        [text, batch], example_labels=["The complaint letter", "A happy customer",
                                                       "Batch: three messages"], cache_examples=False)
        with gr.Column():
            box = error_box("pl-classify-error")
            badge = gr.Markdown(elem_id="pl-classify-badge")
            plot = gr.Plot(label="Label scores", elem_id="pl-classify-plot")
            table = gr.Dataframe(headers=show.LABEL_HEADERS, label="Per text", wrap=True,
                                 column_widths=show.LABEL_WIDTHS, elem_id="pl-classify-table")
            out = _json("classify")
            link_bar = _link_bar("classify", go_btn)
            links.handoff("Why? (which words it rests on)", text, "why", "text", task="sentiment")
    _endpoint("classify", run_classify, {"text": text, "batch": batch, "label_descriptions": desc, "model_box": model},
              [badge, plot, table, out], go_btn, box, link_bar, {"text": text, "batch": batch}, BATCH_LANE)


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
            box = error_box("pl-zero_shot-error")
            badge = gr.Markdown(elem_id="pl-zero_shot-badge")
            plot = gr.Plot(label="Label scores", elem_id="pl-zero_shot-plot")
            table = gr.Dataframe(headers=show.LABEL_HEADERS, label="Per text", wrap=True,
                                 column_widths=show.LABEL_WIDTHS, elem_id="pl-zero_shot-table")
            out = _json("zero_shot")
            link_bar = _link_bar("zero_shot", go_btn)
            _why_packed("zero_shot", "Why? (which words the top label rests on)", text, labels)
    _endpoint("zero_shot", run_zero_shot, {"text": text, "labels": labels, "multi_label": multi, "template": template,
                                           "batch": batch, "model_box": model}, [badge, plot, table, out], go_btn, box,
              link_bar, {"text": text, "labels": labels, "multi": multi, "template": template, "batch": batch},
              BATCH_LANE)


# A Why hand-off that sets several of the Why tab's inputs (zero-shot: the text and the labels; QA: the
# context and the question; NER: the text, with the word and label boxes emptied so the first entity is
# explained) hands over one packed value, kept in step with the inputs in the browser; the Why tab
# unpacks it (components/why/handlers.unpack).
_PACK_JS = ("(text, second) => JSON.stringify({text: text, labels: '', question: '', label: '', word: '', "
            "__SECOND__: second || ''})")


def _why_packed(task: str, label: str, text, second=None, name: str = "labels") -> None:
    inputs = [text] + ([second] if second is not None else [])
    start = {"text": text.value, "labels": "", "question": "", "label": "", "word": ""}
    start[name] = second.value if second is not None else ""
    packed = Textbox(value=json.dumps(start), visible="hidden", label="handed to Why", elem_id=f"pl-{task}-why-packed")
    js = _PACK_JS.replace("__SECOND__", name)
    for box in inputs:
        box.change(None, inputs, packed, js=js, **lifecycle.PAGE_ONLY)
    links.handoff(label, packed, "why", "handed", task=task)


def _build_ner() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=NER_EXAMPLE)
            agg = Radio(["simple", "first", "average", "max", "none"], value="simple",
                           label="Aggregation of sub-word tokens (dedicated models)")
            batch = _batch_box()
            model = model_box(elem_id="pl-ner-model", info=MODEL_BOX_INFO + " " + MULTILINGUAL_NER_INFO)
            go_btn = gr.Button("Find entities", variant="primary", elem_id="pl-ner-run")
            _see_it_elsewhere(text)
            gr.Examples([[NER_EXAMPLE, False, ""], [NER_EXAMPLE_2, False, ""], [LETTER, False, ""],
                         ["\n".join([NER_EXAMPLE, NER_EXAMPLE_2]), True, ""],
                         ["\n".join(MULTILINGUAL_EXAMPLES), True, "multilingual"]], [text, batch, model],
                        example_labels=["Tim Cook at Apple", "Marie Curie", "The book's complaint letter",
                                        "Batch: two sentences", "German, French, Italian (chapter 4's model)"],
                        cache_examples=False)
        with gr.Column():
            box = error_box("pl-ner-error")
            badge = gr.Markdown(elem_id="pl-ner-badge")
            hl = gr.HighlightedText(label="Entities in the text", show_legend=True, elem_id="pl-ner-highlight",
                                   elem_classes=PROSE_HIGHLIGHT)
            table = gr.Dataframe(headers=show.ENTITY_COLUMNS[1:], label="Entities", wrap=True,
                                 elem_id="pl-ner-table")
            out = _json("ner")
            link_bar = _link_bar("ner", go_btn)
            _why_packed("ner", "Why? (which words its first entity's tag rests on)", text)
    _endpoint("ner", run_ner, {"text": text, "aggregation": agg, "batch": batch, "model_box": model},
              [badge, hl, table, out], go_btn, box, link_bar, {"text": text, "aggregation": agg, "batch": batch},
              LONG_LANE)


def _build_qa() -> None:
    with gr.Row():
        with gr.Column():
            context = Textbox(label="Context", lines=6, value=QA_CONTEXT, elem_id="pl-qa-context")
            question = Textbox(label="Question", value=QA_QUESTIONS[0])
            top_n = Slider(1, 10, value=3, step=1, label="Top-n answer spans",
                           info="Distinct spans of the context, best first; offline, the chat model may only copy "
                                "spans and may say the text has no answer.")
            model = _model_box("qa")
            go_btn = gr.Button("Answer", variant="primary", elem_id="pl-qa-run")
            gr.Examples([[QA_CONTEXT, q] for q in QA_QUESTIONS] + [[RHINE, q] for q in RHINE_QUESTIONS]
                        + [[LETTER, "What does the customer want?"]], [context, question],
                        example_labels=[*QA_QUESTIONS, *RHINE_LABELS, "The book's letter: what is wanted?"],
                        cache_examples=False)
        with gr.Column():
            box = error_box("pl-qa-error")
            badge = gr.Markdown(elem_id="pl-qa-badge")
            answer = gr.Markdown(elem_id="pl-qa-answer")
            hl = gr.HighlightedText(label="Answer in the context", show_legend=True, elem_id="pl-qa-highlight",
                                   elem_classes=PROSE_HIGHLIGHT)
            table = gr.Dataframe(headers=["#", "score", "answer", "match", "start", "end"],
                                 label="Top-n spans (with no answer: the spans the model rejected)",
                                 wrap=True, column_widths=["8%", "12%", "44%", "12%", "12%", "12%"],
                                 # typed: an answer such as "1889" must not make the column numeric
                                 datatype=["number", "number", "str", "str", "number", "number"],
                                 elem_id="pl-qa-table")
            out = _json("qa")
            link_bar = _link_bar("qa", go_btn)
            _why_packed("qa", "Why this span? (which words it rests on)", context, question, name="question")
    _endpoint("qa", run_qa, {"context": context, "question": question, "top_n": top_n, "model_box": model},
              [badge, answer, hl, table, out], go_btn, box, link_bar,
              {"context": context, "question": question, "top_n": top_n}, LONG_LANE)


def _build_summarize() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=SUMMARY_EXAMPLE, elem_id="pl-summarize-text")
            with gr.Row():
                max_new = Slider(8, 256, value=60, step=1, label="Max new tokens")
                min_new = Slider(0, 128, value=10, step=1, label="Min new tokens")
                beams = Slider(0, 8, value=0, step=1, label="Beams (0 = the checkpoint's default)")
            reference = Textbox(label="Reference summary (optional: gives ROUGE)", lines=2,
                                value=SUMMARY_REFERENCE, elem_id="pl-summarize-reference")
            note = gr.Markdown(REFERENCE_NOTE, elem_id="pl-summarize-reference-note")
            model = _model_box("summarize")
            go_btn = gr.Button("Summarize", variant="primary", elem_id="pl-summarize-run")
            gr.Examples([[SUMMARY_EXAMPLE, SUMMARY_REFERENCE], [EIFFEL, EIFFEL_SUMMARY], [LETTER, LETTER_SUMMARY]],
                        [text, reference], example_labels=["The wrong parcel (short)", "The Eiffel Tower",
                                                           "The book's complaint letter"], cache_examples=False)
        with gr.Column():
            box = error_box("pl-summarize-error")
            badge = gr.Markdown(elem_id="pl-summarize-badge")
            summary = Textbox(label="Summary", lines=4, interactive=False, elem_id="pl-summarize-output")
            support = gr.HTML(elem_id="pl-summarize-support")
            baseline = Textbox(label="Baseline: the first three sentences (chapter 6's baseline)", lines=3,
                               interactive=False, elem_id="pl-summarize-baseline")
            extractive = Textbox(label="Extractive summary", lines=3, interactive=False, elem_id="pl-summarize-extractive")
            plot = gr.Plot(label="ROUGE", elem_id="pl-summarize-plot")
            scores = gr.Markdown(elem_id="pl-summarize-scores")
            out = _json("summarize")
            link_bar = _link_bar("summarize", go_btn)
    _link_reference([text], reference, note, SUMMARY_PAIRS)
    outputs = [badge, summary, support, baseline, extractive, plot, scores, out]
    _endpoint("summarize", run_summarize, {"text": text, "max_new_tokens": max_new, "min_new_tokens": min_new,
                                           "num_beams": beams, "reference": reference, "model_box": model},
              outputs, go_btn, box, link_bar, {"text": text, "max_new": max_new, "min_new": min_new, "beams": beams},
              server_lane(), planner=_summary_plan)


def _build_translate() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=4, value=LETTER_START, elem_id="pl-translate-text")
            with gr.Row():
                src = Dropdown(LANGUAGES, value="en", label="From")
                tgt = Dropdown(LANGUAGES, value="de", label="To")
            with gr.Row():
                max_new = Slider(8, 400, value=120, step=1, label="Max new tokens")
                beams = Slider(0, 8, value=0, step=1, label="Beams (0 = the checkpoint's default)")
            reference = Textbox(label="Reference translation (optional: gives BLEU)", lines=2,
                                value=LETTER_GERMAN_START, elem_id="pl-translate-reference")
            note = gr.Markdown(REFERENCE_NOTE, elem_id="pl-translate-reference-note")
            model = _model_box("translate")
            go_btn = gr.Button("Translate", variant="primary", elem_id="pl-translate-run")
            gr.Examples([[LETTER_START, LETTER_GERMAN_START]], [text, reference],
                        example_labels=["The letter's first sentence"], cache_examples=False)
        with gr.Column():
            box = error_box("pl-translate-error")
            badge = gr.Markdown(elem_id="pl-translate-badge")
            translation = Textbox(label="Translation", lines=4, interactive=False, elem_id="pl-translate-output")
            pair = gr.Markdown(elem_id="pl-translate-pair")
            out = _json("translate")
            link_bar = _link_bar("translate", go_btn)
    _link_reference([text, src, tgt], reference, note, TRANSLATION_PAIRS)
    _endpoint("translate", run_translate, {"text": text, "source": src, "target": tgt, "max_new_tokens": max_new,
                                           "num_beams": beams, "reference": reference, "model_box": model},
              [badge, translation, pair, out], go_btn, box, link_bar,
              {"text": text, "source": src, "target": tgt, "max_new": max_new, "beams": beams}, server_lane(),
              planner=_translation_plan)


def _build_generate_text() -> None:
    with gr.Row():
        with gr.Column():
            prompt = Textbox(label="Prompt", lines=6, value=REPLY_PROMPT)
            strategy = Radio(["greedy", "sample", "beam"], value="greedy", label="Strategy",
                             elem_id="pl-generate_text-strategy",
                             info="Greyed-out knobs do nothing for this strategy: greedy uses none of them, "
                                  "sampling its temperature, top-k, top-p and seed, beam search its beams.")
            with gr.Row():
                max_new = Slider(1, 256, value=48, step=1, label="Max new tokens", elem_id="pl-generate_text-max")
                temperature = Slider(0.05, 2.0, value=0.7, step=0.05, label="Temperature", interactive=False,
                                     elem_id="pl-generate_text-temperature")
                beams = Slider(1, 8, value=4, step=1, label="Beams", interactive=False,
                               elem_id="pl-generate_text-beams")
            with gr.Row():
                top_k = Slider(0, 200, value=50, step=1, label="Top-k (0 = off)", interactive=False,
                               elem_id="pl-generate_text-top_k")
                top_p = Slider(0.05, 1.0, value=0.9, step=0.05, label="Top-p", interactive=False,
                               elem_id="pl-generate_text-top_p")
                seed = Number(value=0, precision=0, label="Seed", interactive=False, elem_id="pl-generate_text-seed")
            model = _model_box("generate_text")
            with gr.Row():
                go_btn = gr.Button("Generate", variant="primary", elem_id="pl-generate_text-run")
                stop_btn = gr.Button("Stop", variant="stop", elem_id="pl-generate_text-stop")
            with gr.Row():  # the same prompt in the tabs that show how it is generated
                links.handoff("Step through it in Decoding", prompt, "decoding", "prompt")
                links.handoff("See the decoder's attention", prompt, "attention", "text", role="decoder", text_b="")
            gr.Examples([[REPLY_PROMPT]], [prompt], example_labels=["Reply to the letter"], cache_examples=False)
        with gr.Column():
            box = error_box("pl-generate_text-error")
            badge = gr.Markdown(elem_id="pl-generate_text-badge")
            counter = gr.Markdown(elem_id="pl-generate_text-counter")
            generated = Textbox(label="Generated text", lines=10, interactive=False,
                                   elem_id="pl-generate_text-output")
            out = _json("generate_text")
            link_bar = _link_bar("generate_text", go_btn)
    inputs = {"prompt": prompt, "strategy": strategy, "max_new_tokens": max_new, "temperature": temperature,
              "top_k": top_k, "top_p": top_p, "num_beams": beams, "seed": seed, "model_box": model}
    strategy.change(_knobs_for, [strategy], [temperature, top_k, top_p, beams, seed], **lifecycle.PAGE_ONLY)
    # The button streams (not an API; its code view calls /generate_text, which keeps its one-shot result for
    # scripts). No error box here: a Stop counts as a failure and would blank the text streamed so far. The
    # handler blanks the old result itself and puts an input error in the box. A cancel (Stop) closes the
    # generator, which stops generation.
    api_btn = gr.Button(visible=False)  # runs /generate_text (before the runs panel, where it always was)
    ev, = _endpoint("generate_text", stream_generate, inputs, [badge, generated, counter, out, box], go_btn, None,
                    link_bar, {"prompt": prompt, "strategy": strategy, "max_new": max_new, "temperature": temperature,
                               "top_k": top_k, "top_p": top_p, "beams": beams, "seed": seed}, server_lane(),
                    private=True, planner=_generation_plan, result=out)
    # Cancel first, then say so: a token already on its way must not overwrite the "stopped" line.
    stop_btn.click(None, None, None, cancels=[ev], queue=False, api_visibility="private").then(
        lambda c: (c or "").rstrip("…") + " · stopped by you", [counter], [counter], queue=False,
        api_visibility="private")
    declare(Endpoint("generate_text", run_generate, inputs, [badge, generated, out], trigger=api_btn,
                     lane=server_lane(), planner=_generation_plan, contract=CONTRACTS["generate_text"],
                     result=out))


def _build_fill_mask() -> None:
    with gr.Row():
        with gr.Column():
            gr.Markdown("The book's fill-mask model is BERT, a masked LM that reads both sides of the mask. "
                        "Offline (`local` profile) none ships, so the **decoder** fills it: it proposes the "
                        "words likeliest after the text left of the mask, then scores the whole sentence with "
                        "each one in place, so the right side counts too. Both scores are shown.")
            text = Textbox(label="Text with one [MASK] (or <mask>)", lines=3, value=MASK_EXAMPLES[0][1],
                           elem_id="pl-fill_mask-text")
            top_k = Slider(1, 20, value=5, step=1, label="Top-k words")
            model = _model_box("fill_mask")
            go_btn = gr.Button("Fill", variant="primary", elem_id="pl-fill_mask-run")
            gr.Examples([[t] for _, t in MASK_EXAMPLES], [text], example_labels=[n for n, _ in MASK_EXAMPLES],
                        cache_examples=False)
        with gr.Column():
            box = error_box("pl-fill_mask-error")
            badge = gr.Markdown(elem_id="pl-fill_mask-badge")
            plot = gr.Plot(label="Top-k words", elem_id="pl-fill_mask-plot")
            table = gr.Dataframe(headers=show.DECODER_MASK_HEADERS, label="Candidates", wrap=True,
                                 column_widths=["18%", "13%", "14%", "10%", "14%", "31%"],
                                 elem_id="pl-fill_mask-table")
            out = _json("fill_mask")
            link_bar = _link_bar("fill_mask", go_btn)
    _endpoint("fill_mask", run_fill_mask, {"text": text, "top_k": top_k, "model_box": model}, [badge, plot, table, out],
              go_btn, box, link_bar, {"text": text, "top_k": top_k}, SHORT_LANE)


SUBTABS = [
    ("Text classification", "classify", _build_classify),
    ("Zero-shot", "zero_shot", _build_zero_shot),
    ("Named entities", "ner", _build_ner),
    ("Question answering", "qa", _build_qa),
    ("Summarization", "summarize", _build_summarize),
    ("Translation", "translate", _build_translate),
    ("Text generation", "generate_text", _build_generate_text),
    ("Fill-mask", "fill_mask", _build_fill_mask),
]
# Tasks quick enough that a link opening them runs them at once (the others only restore inputs).
CHEAP = {"classify", "zero_shot", "ner", "fill_mask"}
_SUBTABS: dict = {}  # the task sub-tabs' gr.Tabs while build() runs (links select a task in it)


def _see_it_elsewhere(text) -> None:
    """Hand-offs: the same text in the Tokenizers and Attention tabs (one click, no retyping)."""
    with gr.Row():
        links.handoff("See its tokens", text, "tokenizers", "text")
        links.handoff("See its attention", text, "attention", "text", role="encoder", text_b="")


def _link_bar(task: str, go_btn):
    """The task's "copy link" bar, where it is called (under its result)."""
    return links.bar(f"pipelines-{task}", run=go_btn if task in CHEAP else None)


def _endpoint(task: str, fn, inputs: dict, outputs: list, go_btn, box, link_bar, params: dict, lane: dict,
              private: bool = False, result=None, **extra) -> list:
    """Declare one task's endpoint: /<task> run by its button (`private`: the button's event is not the API,
    its code view still calls /<task>), its error box, its code view, its link ?tab=pipelines-<task> that
    opens Pipelines at that task with `params` (the model box is left out: a link never chooses which
    weights a visitor loads), and this task's runs, two side by side (their panel at the sub-tab's end)."""
    kept = runs.panel(f"pipelines-{task}")
    return declare(Endpoint(
        None if private else task, fn, inputs, outputs, trigger=go_btn, lane=lane, errors=box,
        code=Code(_CODE.pop(task), name=task), result=outputs[-1] if result is None else result, runs=Runs(kept),
        link=Link(f"pipelines-{task}", link_bar, params, run=go_btn if task in CHEAP else None, parent="pipelines",
                  subtabs=_SUBTABS["tabs"]), contract=CONTRACTS[task], **extra))


def build() -> None:
    """Sub-tabs for the eight tasks, wired to their api_names."""
    gr.Markdown(intro_markdown(pipelines.serving_methods()))  # from the serving decision, never by hand
    with gr.Tabs(overflow_behavior="wrap", elem_id="pl-tasks") as tabs:
        _SUBTABS["tabs"] = tabs
        for name, task, build_task in SUBTABS:
            with gr.Tab(name, id=f"pipelines-{task}", elem_id=f"pl-{task}-tab"):
                build_task()
