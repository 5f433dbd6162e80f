"""The Pipelines tab: the book's chapter 1 tasks on a complaint letter, and what serves them.

One sub-tab per task. Each handler loads the role's model from the hub (or the model box's
override), calls `backend.pipelines`, and formats the plain result: a badge saying which
checkpoint served it (its source, method and time), a plot or highlight where a person
would rather look than read, and the raw JSON (the API contract).
"""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from backend import models
from backend.pipelines import tasks as P
from backend.pipelines.similarity import SENTIMENT_DESCRIPTIONS, parse_label_descriptions
from components.common import MODEL_QUEUE, model_badge, short, user_errors
from components.pipelines_examples import (
    LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, PRAISE, QUESTION, REPLY_PROMPT,
)

ROLE = {
    "classify": "sentiment", "zero_shot": "zero_shot", "ner": "ner", "qa": "qa",
    "summarize": "summarization", "translate": "translation", "fill_mask": "fill_mask",
    "generate_text": "text_generation",
}
LANGUAGES = [("English", "en"), ("German", "de"), ("French", "fr"), ("Spanish", "es"),
             ("Italian", "it"), ("Dutch", "nl")]
SENTIMENT_DEFAULT = "\n".join(f"{k}: {v}" for k, v in SENTIMENT_DESCRIPTIONS.items())
MODEL_BOX_INFO = ("Empty: the profile's model. Or a Hugging Face Hub id, or a local directory "
                  "saved with save_pretrained().")


# ---------------------------------------------------------------------------- helpers

def _load(task: str, override: str | None, progress=None):
    if progress is not None:
        progress(0.1, desc="Loading the model (first use only)")
    lm = models.get_hub().load(ROLE[task], override=(override or "").strip() or None)
    if progress is not None:
        progress(0.4, desc="Running")
    return lm


def _badge(result: dict) -> str:
    """Which checkpoint served the result (common badge), the method, and any notices."""
    text = model_badge(result["model"], result["seconds"])
    text += f"\n\n**method:** `{result['method']}`"
    if result.get("scoring"):
        text += f" · scores: {result['scoring']}"
    for note in result.get("notices", []):
        text += f"\n\n> {note}"
    return text


def _texts(text: str, batch: bool) -> list[str]:
    return P.split_lines(text) if batch else [P.check_text(text)]



def _bars(results: list[dict], title: str, xaxis: str = "score") -> go.Figure:
    fig = go.Figure()
    for res in results[:8]:
        fig.add_bar(y=res["labels"][::-1], x=res["scores"][::-1], orientation="h",
                    name=short(res["sequence"]),
                    text=[f"{s:.3f}" for s in res["scores"][::-1]], textposition="auto")
    fig.update_layout(title=title, xaxis_title=xaxis, barmode="group", height=280 + 24 * len(results[0]["labels"]),
                      margin=dict(l=10, r=10, t=40, b=10), showlegend=len(results) > 1,
                      xaxis=dict(range=[0, 1]))
    return fig


def _label_table(results: list[dict]) -> list[list]:
    rows = []
    for i, res in enumerate(results, 1):
        scores = dict(zip(res["labels"], res["scores"]))
        rows.append([i, short(res["sequence"], 80), res["labels"][0], round(res["scores"][0], 4),
                     ", ".join(f"{k}: {v:.3f}" for k, v in scores.items())])
    return rows


LABEL_HEADERS = ["#", "text", "top label", "score", "all scores"]


# ---------------------------------------------------------------------------- handlers

@user_errors
@models.gpu_task
def run_classify(text, batch, label_descriptions, model_box, progress=gr.Progress()):
    texts = _texts(text, batch)
    lm = _load("classify", model_box, progress)
    desc = parse_label_descriptions(label_descriptions) if (label_descriptions or "").strip() else None
    if lm.method != "embedding-similarity" and (label_descriptions or "").strip() == SENTIMENT_DEFAULT:
        desc = None  # the default descriptions only matter for the embedding method
    r = P.classify(lm, texts, label_descriptions=desc)
    return _badge(r), _bars(r["results"], "Label scores"), _label_table(r["results"]), r


@user_errors
@models.gpu_task
def run_zero_shot(text, labels, multi_label, template, batch, model_box, progress=gr.Progress()):
    texts = _texts(text, batch)
    lm = _load("zero_shot", model_box, progress)
    r = P.zero_shot(lm, texts, labels, multi_label=bool(multi_label), template=template)
    title = "Independent label scores (multi-label)" if multi_label else "Label scores (sum to 1)"
    return _badge(r), _bars(r["results"], title), _label_table(r["results"]), r


def _highlight(texts: list[str], per_text: list[list[dict]]) -> dict:
    """Several texts joined by blank lines, entity offsets shifted to match."""
    joined, entities, offset = "", [], 0
    for i, (text, ents) in enumerate(zip(texts, per_text)):
        if i:
            joined += "\n\n"
            offset += 2
        for e in ents:
            entities.append({"entity": e["entity_group"], "start": e["start"] + offset, "end": e["end"] + offset})
        joined += text
        offset += len(text)
    return {"text": joined, "entities": entities}


@user_errors
@models.gpu_task
def run_ner(text, aggregation, batch, model_box, progress=gr.Progress()):
    texts = _texts(text, batch)
    lm = _load("ner", model_box, progress)
    r = P.ner(lm, texts, aggregation=aggregation)
    res = r["results"]
    rows = [[i, e["entity_group"], e["word"], None if e["score"] is None else round(e["score"], 4), e["start"], e["end"]]
            for i, x in enumerate(res, 1) for e in x["entities"]]
    return _badge(r), _highlight([x["text"] for x in res], [x["entities"] for x in res]), rows, r


@user_errors
@models.gpu_task
def run_qa(context, question, top_n, model_box, progress=gr.Progress()):
    lm = _load("qa", model_box, progress)
    r = P.qa(lm, question, context, top_n=int(top_n))
    entities, taken = [], []
    for rank, a in enumerate(r["answers"], 1):
        if a["start"] is None:
            continue
        if any(not (a["end"] <= s or a["start"] >= e) for s, e in taken):
            continue  # overlapping alternatives stay in the table only
        score = "" if a["score"] is None else f" {a['score']:.2f}"
        entities.append({"entity": ("answer" if rank == 1 else f"#{rank}") + score,
                         "start": a["start"], "end": a["end"]})
        taken.append((a["start"], a["end"]))
    rows = [[i, a["answer"], None if a["score"] is None else round(a["score"], 4), a["start"], a["end"],
             a.get("match", "")] for i, a in enumerate(r["answers"], 1)]
    answer_md = f"### {r['answer'] or '(no answer)'}"
    if r["score"] is not None:
        answer_md += f"\nscore {r['score']:.3f}"
    return _badge(r), answer_md, {"text": r["context"], "entities": entities}, rows, r


def _rouge_plot(rouge: dict | None):
    if not rouge:
        return None
    names = list(rouge)
    fig = go.Figure()
    for key in ("precision", "recall", "f1"):
        fig.add_bar(x=names, y=[rouge[n][key] for n in names], name=key,
                    text=[f"{rouge[n][key]:.2f}" for n in names], textposition="auto")
    fig.update_layout(title="ROUGE against the reference", barmode="group", yaxis=dict(range=[0, 1]),
                      height=300, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def _settings(max_new_tokens, min_new_tokens=None, num_beams=None) -> dict:
    s = {"max_new_tokens": int(max_new_tokens)}
    if min_new_tokens:
        s["min_new_tokens"] = int(min_new_tokens)
    if num_beams:
        s["num_beams"] = int(num_beams)
    return s


@user_errors
@models.gpu_task
def run_summarize(text, max_new_tokens, min_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    lm = _load("summarize", model_box, progress)
    r = P.summarize(lm, text, _settings(max_new_tokens, min_new_tokens, num_beams), reference=reference)
    return _badge(r), r["summary"], _rouge_plot(r.get("rouge")), r


@user_errors
@models.gpu_task
def run_translate(text, source, target, max_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    lm = _load("translate", model_box, progress)
    r = P.translate(lm, text, source, target, _settings(max_new_tokens, None, num_beams), reference=reference)
    info = f"**{r['language_pair']}**"
    if "bleu" in r:
        b = r["bleu"]
        info += (f" · **BLEU {b['bleu']:.1f}** (n-gram precisions "
                 + ", ".join(f"{p:.0f}" for p in b["precisions"]) + f"; brevity penalty {b['brevity_penalty']:.2f})")
    return _badge(r), r["translation"], info, r


@user_errors
@models.gpu_task
def run_fill_mask(text, top_k, model_box, progress=gr.Progress()):
    lm = _load("fill_mask", model_box, progress)
    r = P.fill_mask(lm, text, top_k=int(top_k))
    cands = r["candidates"]
    fig = go.Figure(go.Bar(y=[c["token_str"] for c in cands][::-1], x=[c["score"] for c in cands][::-1],
                           orientation="h", text=[f"{c['score']:.3f}" for c in cands][::-1]))
    fig.update_layout(title="P(token | context) at [MASK]", height=260 + 20 * len(cands),
                      margin=dict(l=10, r=10, t=40, b=10))
    rows = [[c["token_str"], round(c["score"], 4), c["sequence"]] for c in cands]
    return _badge(r), fig, rows, r


@user_errors
@models.gpu_task
def run_generate(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box,
                 progress=gr.Progress()):
    lm = _load("generate_text", model_box, progress)
    settings = {"strategy": strategy, "max_new_tokens": max_new_tokens, "temperature": temperature,
                "top_k": top_k, "top_p": top_p, "num_beams": num_beams,
                "seed": None if seed is None or seed == "" else int(seed)}
    r = P.generate_text(lm, prompt, settings)
    return _badge(r), r["generated_text"], r


# ------------------------------------------------------------------------------- build

def _model_box(task: str):
    return gr.Textbox(label="Model", placeholder="profile default", info=MODEL_BOX_INFO, elem_id=f"pl-{task}-model")


def _json(task: str):
    return gr.JSON(label="Result (JSON, as the API returns it)", open=False, elem_id=f"pl-{task}-json")


def build() -> None:
    """Sub-tabs for the eight tasks, wired to their api_names."""
    gr.Markdown(
        "The book opens by running `pipeline()` on a customer's complaint letter. Each task below "
        "shows which checkpoint served it, where it came from and how long it took. Offline "
        "(`local` profile), classification is done by **embedding similarity** and NER, QA, "
        "summarization and translation by an **instruct-model fallback**: said next to each result."
    )
    with gr.Tabs():
        with gr.Tab("Text classification"):
            with gr.Row():
                with gr.Column():
                    text = gr.Textbox(label="Text", lines=6, value=LETTER)
                    batch = gr.Checkbox(label="Batch mode: one text per line", value=False)
                    desc = gr.Textbox(label="Label descriptions (embedding-similarity method only)", lines=2,
                                      value=SENTIMENT_DEFAULT,
                                      info="LABEL: description, one per line. A dedicated classifier ignores them.")
                    model = _model_box("classify")
                    go_btn = gr.Button("Classify", variant="primary", elem_id="pl-classify-run")
                    gr.Examples([[LETTER, False], [PRAISE, False], ["\n".join([LETTER, PRAISE, QUESTION]), True]],
                                [text, batch], example_labels=["The complaint letter", "A happy customer",
                                                               "Batch: three messages"], cache_examples=False)
                with gr.Column():
                    badge = gr.Markdown(elem_id="pl-classify-badge")
                    plot = gr.Plot(label="Label scores", elem_id="pl-classify-plot")
                    table = gr.Dataframe(headers=LABEL_HEADERS, label="Per text", wrap=True)
                    out = _json("classify")
            go_btn.click(run_classify, [text, batch, desc, model], [badge, plot, table, out],
                         api_name="classify", **MODEL_QUEUE)

        with gr.Tab("Zero-shot"):
            with gr.Row():
                with gr.Column():
                    text = gr.Textbox(label="Text", lines=6, value=LETTER)
                    labels = gr.Textbox(label="Candidate labels (comma-separated)",
                                        value="complaint, praise, question, wrong item delivered")
                    multi = gr.Checkbox(label="Multi-label: score each label on its own", value=False)
                    template = gr.Textbox(label="Hypothesis / description template", value="This text is about {}.",
                                          info="NLI models: the hypothesis. Embedding method: the label's description.")
                    batch = gr.Checkbox(label="Batch mode: one text per line", value=False)
                    model = _model_box("zero_shot")
                    go_btn = gr.Button("Classify", variant="primary", elem_id="pl-zero_shot-run")
                    gr.Examples([[LETTER, "complaint, praise, question, wrong item delivered", False],
                                 [QUESTION, "shipping, product availability, refund, praise", True]],
                                [text, labels, multi], example_labels=["The complaint letter", "A question, multi-label"],
                                cache_examples=False)
                with gr.Column():
                    badge = gr.Markdown(elem_id="pl-zero_shot-badge")
                    plot = gr.Plot(label="Label scores", elem_id="pl-zero_shot-plot")
                    table = gr.Dataframe(headers=LABEL_HEADERS, label="Per text", wrap=True)
                    out = _json("zero_shot")
            go_btn.click(run_zero_shot, [text, labels, multi, template, batch, model], [badge, plot, table, out],
                         api_name="zero_shot", **MODEL_QUEUE)

        with gr.Tab("Named entities"):
            with gr.Row():
                with gr.Column():
                    text = gr.Textbox(label="Text", lines=6, value=LETTER)
                    agg = gr.Radio(["simple", "first", "average", "max", "none"], value="simple",
                                   label="Aggregation of sub-word tokens (dedicated models)")
                    batch = gr.Checkbox(label="Batch mode: one text per line", value=False)
                    model = _model_box("ner")
                    go_btn = gr.Button("Find entities", variant="primary", elem_id="pl-ner-run")
                    gr.Examples([[LETTER, False], ["\n".join([LETTER_START, PRAISE, QUESTION]), True]], [text, batch],
                                example_labels=["The complaint letter", "Batch: three messages"], cache_examples=False)
                with gr.Column():
                    badge = gr.Markdown(elem_id="pl-ner-badge")
                    hl = gr.HighlightedText(label="Entities in the text", show_legend=True, elem_id="pl-ner-highlight")
                    table = gr.Dataframe(headers=["#", "type", "entity", "score", "start", "end"], label="Entities")
                    out = _json("ner")
            go_btn.click(run_ner, [text, agg, batch, model], [badge, hl, table, out], api_name="ner", **MODEL_QUEUE)

        with gr.Tab("Question answering"):
            with gr.Row():
                with gr.Column():
                    context = gr.Textbox(label="Context", lines=6, value=LETTER)
                    question = gr.Textbox(label="Question", value="What does the customer want?")
                    top_n = gr.Slider(1, 10, value=3, step=1, label="Top-n answer spans")
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
                         api_name="qa", **MODEL_QUEUE)

        with gr.Tab("Summarization"):
            with gr.Row():
                with gr.Column():
                    text = gr.Textbox(label="Text", lines=6, value=LETTER)
                    with gr.Row():
                        max_new = gr.Slider(8, 256, value=60, step=1, label="Max new tokens")
                        min_new = gr.Slider(0, 128, value=10, step=1, label="Min new tokens")
                        beams = gr.Slider(0, 8, value=0, step=1, label="Beams (0 = the checkpoint's default)")
                    reference = gr.Textbox(label="Reference summary (optional: gives ROUGE)", lines=2, value=LETTER_SUMMARY)
                    model = _model_box("summarize")
                    go_btn = gr.Button("Summarize", variant="primary", elem_id="pl-summarize-run")
                    gr.Examples([[LETTER, LETTER_SUMMARY]], [text, reference], example_labels=["The complaint letter"],
                                cache_examples=False)
                with gr.Column():
                    badge = gr.Markdown(elem_id="pl-summarize-badge")
                    summary = gr.Textbox(label="Summary", lines=4, interactive=False, elem_id="pl-summarize-output")
                    plot = gr.Plot(label="ROUGE", elem_id="pl-summarize-plot")
                    out = _json("summarize")
            go_btn.click(run_summarize, [text, max_new, min_new, beams, reference, model], [badge, summary, plot, out],
                         api_name="summarize", **MODEL_QUEUE)

        with gr.Tab("Translation"):
            with gr.Row():
                with gr.Column():
                    text = gr.Textbox(label="Text", lines=4, value=LETTER_START)
                    with gr.Row():
                        src = gr.Dropdown(LANGUAGES, value="en", label="From")
                        tgt = gr.Dropdown(LANGUAGES, value="de", label="To")
                    with gr.Row():
                        max_new = gr.Slider(8, 400, value=120, step=1, label="Max new tokens")
                        beams = gr.Slider(0, 8, value=0, step=1, label="Beams (0 = the checkpoint's default)")
                    reference = gr.Textbox(label="Reference translation (optional: gives BLEU)", lines=2,
                                           value=LETTER_GERMAN_START)
                    model = _model_box("translate")
                    go_btn = gr.Button("Translate", variant="primary", elem_id="pl-translate-run")
                    gr.Examples([[LETTER_START, LETTER_GERMAN_START]], [text, reference],
                                example_labels=["The letter's first sentence"], cache_examples=False)
                with gr.Column():
                    badge = gr.Markdown(elem_id="pl-translate-badge")
                    translation = gr.Textbox(label="Translation", lines=4, interactive=False, elem_id="pl-translate-output")
                    pair = gr.Markdown(elem_id="pl-translate-pair")
                    out = _json("translate")
            go_btn.click(run_translate, [text, src, tgt, max_new, beams, reference, model], [badge, translation, pair, out],
                         api_name="translate", **MODEL_QUEUE)

        with gr.Tab("Text generation"):
            with gr.Row():
                with gr.Column():
                    prompt = gr.Textbox(label="Prompt", lines=6, value=REPLY_PROMPT)
                    strategy = gr.Radio(["greedy", "sample", "beam"], value="greedy", label="Strategy")
                    with gr.Row():
                        max_new = gr.Slider(1, 256, value=48, step=1, label="Max new tokens")
                        temperature = gr.Slider(0.05, 2.0, value=0.7, step=0.05, label="Temperature")
                        beams = gr.Slider(1, 8, value=4, step=1, label="Beams")
                    with gr.Row():
                        top_k = gr.Slider(0, 200, value=50, step=1, label="Top-k (0 = off)")
                        top_p = gr.Slider(0.05, 1.0, value=0.9, step=0.05, label="Top-p")
                        seed = gr.Number(value=0, precision=0, label="Seed")
                    model = _model_box("generate_text")
                    go_btn = gr.Button("Generate", variant="primary", elem_id="pl-generate_text-run")
                    gr.Examples([[REPLY_PROMPT]], [prompt], example_labels=["Reply to the letter"], cache_examples=False)
                with gr.Column():
                    badge = gr.Markdown(elem_id="pl-generate_text-badge")
                    generated = gr.Textbox(label="Generated text", lines=10, interactive=False, elem_id="pl-generate_text-output")
                    out = _json("generate_text")
            go_btn.click(run_generate, [prompt, strategy, max_new, temperature, top_k, top_p, beams, seed, model],
                         [badge, generated, out], api_name="generate_text", **MODEL_QUEUE)

        with gr.Tab("Fill-mask"):
            with gr.Row():
                with gr.Column():
                    text = gr.Textbox(label="Text with one [MASK]", lines=3,
                                      value="I ordered a Megatron action [MASK] from your online store.")
                    top_k = gr.Slider(1, 20, value=5, step=1, label="Top-k tokens")
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
