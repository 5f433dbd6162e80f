"""The Pipelines tab: the book's chapter 1 tasks on a complaint letter, and what serves them.

One sub-tab per task. Each handler passes the widgets' values (and the model box, as an
override) to `backend.pipelines`, which loads the task's model itself, and formats the plain
result: a badge saying which checkpoint served it (its source, method and time), a plot or
highlight where a person would rather look than read, and the raw JSON (the API contract).
"""

from __future__ import annotations

import contextlib
import logging

import gradio as gr

from backend import pipelines
from backend.runtime.errors import LabError
from components.shell import links
from components.pipelines import plots as show
from components.pipelines import summary_view
from components.shell import (
    BATCH_LANE, LONG_LANE, SHORT_LANE, Checkbox, Dropdown, Number, Radio, Slider, Textbox, clear_on_error, engine_lane,
    engine_lane_reader, engine_or_long_slot, error_box, md_text, model_box, raw_json, user_errors,
)
from components.pipelines.intro import intro_markdown
from components.pipelines.examples import (
    LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, MASK_EXAMPLES, NER_EXAMPLE, NER_EXAMPLE_2, PRAISE,
    QA_CONTEXT, QA_QUESTIONS, QUESTION, REPLY_PROMPT, SUMMARY_EXAMPLE, SUMMARY_REFERENCE, EIFFEL, EIFFEL_SUMMARY,
)
from components.pipelines.examples import RHINE, RHINE_LABELS, RHINE_QUESTIONS

LANGUAGES = [("English", "en"), ("German", "de"), ("French", "fr"), ("Spanish", "es"),
             ("Italian", "it"), ("Dutch", "nl")]
MODEL_BOX_INFO = ("Empty: the profile's model. Or a Hugging Face Hub id, or a local directory "
                  "saved with save_pretrained().")


# ---------------------------------------------------------------------------- handlers

@user_errors
def run_classify(text, batch, label_descriptions, model_box, request: gr.Request = None, progress=gr.Progress()):
    # The session id lets a session that chose "Use in Pipelines" (Train tab) get its own classifier.
    r = pipelines.classify(text, batch, label_descriptions, override=model_box, progress=progress,
                           session_id=getattr(request, "session_hash", None))
    return show.badge(r), show.label_bars(r["results"], "Label scores"), show.label_table(r["results"]), r


@user_errors
def run_zero_shot(text, labels, multi_label, template, batch, model_box, progress=gr.Progress()):
    r = pipelines.zero_shot(text, labels, multi_label, template, batch, override=model_box, progress=progress)
    title = "Independent label scores (multi-label)" if r["multi_label"] else "Label scores (sum to 1)"
    return (show.badge(r), show.label_bars(r["results"], title, multi_label=bool(r["multi_label"])),
            show.label_table(r["results"]), r)


@user_errors
def run_ner(text, aggregation, batch, model_box, progress=gr.Progress()):
    r = pipelines.ner(text, aggregation, batch, override=model_box, progress=progress)
    res = r["results"]
    highlight = show.entity_highlight([x["text"] for x in res], [x["entities"] for x in res])
    table = gr.update(value=show.entity_rows(res), label=show.entity_table_label(res))
    return show.badge(r), highlight, table, r


@user_errors
def run_qa(context, question, top_n, model_box, progress=gr.Progress()):
    r = pipelines.qa(context, question, top_n, override=model_box, progress=progress)
    return show.badge(r), show.answer_markdown(r), show.answer_highlight(r), show.answer_rows(r), r


@user_errors
def run_summarize(text, max_new_tokens, min_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    reference, dropped = _own_reference(text, reference, SUMMARY_PAIRS)
    with engine_or_long_slot(_summary_on_engine((text, max_new_tokens, min_new_tokens, num_beams, reference,
                                                 model_box)), "summary"):
        r = pipelines.summarize(text, max_new_tokens, min_new_tokens, num_beams, reference,
                                override=model_box, progress=progress)
    _say_dropped(r, dropped)
    summary = gr.update(value=r["summary"], label=show.output_label(r, "Summary", "summarise"))
    base = r["baseline"]
    baseline = gr.update(value=base["summary"], label=f"Baseline: {base['name']}")
    extractive = gr.update(value=(r.get("extractive") or {}).get("summary", ""), label=summary_view.extractive_label(r))
    return (show.badge(r), summary, summary_view.support_html(r), baseline, extractive, show.rouge_bars(r),
            show.rouge_table(r), r)


@user_errors
def run_translate(text, source, target, max_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    reference, dropped = _own_reference(text, reference, TRANSLATION_PAIRS)
    with engine_or_long_slot(_translation_on_engine((text, source, target, max_new_tokens, num_beams, reference,
                                                     model_box)), "translation"):
        r = pipelines.translate(text, source, target, max_new_tokens, num_beams, reference,
                                override=model_box, progress=progress)
    _say_dropped(r, dropped)
    translation = gr.update(value=r["translation"], label=show.output_label(r, "Translation", "translate"))
    return show.badge(r), translation, show.bleu_line(r), r


@user_errors
def run_fill_mask(text, top_k, model_box, progress=gr.Progress()):
    r = pipelines.fill_mask(text, top_k, override=model_box, progress=progress)
    return show.badge(r), show.mask_bars(r), show.mask_rows(r["candidates"]), r


@user_errors
def run_generate(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box,
                 progress=gr.Progress()):
    args = (prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box)
    with engine_or_long_slot(_generation_on_engine(args), "generation"):
        r = pipelines.generate_text(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed,
                                    override=model_box, progress=progress)
    return show.badge(r), r["generated_text"], r


@user_errors  # a cancel (Stop) closes the generator, which stops generation
def stream_generate(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box,
                    progress=gr.Progress()):
    """The Generate button: the text grows token by token, with a counter; then the result."""
    stream = pipelines.generate_text_stream(prompt, strategy, max_new_tokens, temperature, top_k, top_p,
                                            num_beams, seed, override=model_box, progress=progress)
    total = max_new_tokens
    first = show.token_counter(0, total)
    if strategy == "beam":
        first = "Beam search keeps several sequences: the text shows when it is done…"
    hidden = gr.update(value="", visible=False)
    yield "", "", first, None, hidden  # no stale result while this one runs
    args = (prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box)
    try:
        with engine_or_long_slot(_generation_on_engine(args), "generation"), contextlib.closing(stream):
            for completion, n, r in stream:
                if r is None:
                    yield gr.skip(), _joined(prompt, completion), show.token_counter(n, total), gr.skip(), gr.skip()
                else:
                    yield show.badge(r), r["generated_text"], show.token_counter(n, total, r), r, gr.skip()
    except LabError as exc:  # shown inline only: a raised error would badge every output "Error"
        logging.getLogger("transformers_lab.input").info("stream_generate: %s", str(exc).replace("\n", " ")[:300])
        yield "", "", "", None, gr.update(value=f"**⚠️ {md_text(str(exc))}**", visible=True)


# With a generation engine these handlers are in the decode lane (common.engine_lane): the engine
# batches a class's requests; what stays here (a model-box model, beams, sampling for the instruct
# fallbacks, the engine down) is long work and takes the long lane's slot first. Each reader gets the
# handler's positional inputs and asks the backend whether the engine will do the work (no network).
def _beams(value) -> int:
    try:
        return int(float(value or 0))
    except (TypeError, ValueError, OverflowError):  # "many", inf: the handler refuses it in its own words
        return 0


def _summary_on_engine(args: tuple) -> bool:
    text, max_new, min_new, beams, reference, model = (tuple(args) + (None,) * 6)[:6]
    return pipelines.runs_on_engine("summarize", model if isinstance(model, str) else None,
                                    {"num_beams": _beams(beams)})


def _translation_on_engine(args: tuple) -> bool:
    text, src, tgt, max_new, beams, reference, model = (tuple(args) + (None,) * 7)[:7]
    return pipelines.runs_on_engine("translate", model if isinstance(model, str) else None,
                                    {"num_beams": _beams(beams)})


def _generation_on_engine(args: tuple) -> bool:
    prompt, strategy, max_new, temperature, top_k, top_p, beams, seed, model = (tuple(args) + (None,) * 9)[:9]
    settings = {"strategy": strategy, "max_new_tokens": max_new, "temperature": temperature, "top_k": top_k,
                "top_p": top_p, "num_beams": beams, "seed": seed}
    return pipelines.runs_on_engine("generate_text", model if isinstance(model, str) else None, settings)


engine_lane_reader(run_summarize, _summary_on_engine)
engine_lane_reader(run_translate, _translation_on_engine)
engine_lane_reader(run_generate, _generation_on_engine)
engine_lane_reader(stream_generate, _generation_on_engine)


def _joined(prompt, completion: str) -> str:
    return (prompt if isinstance(prompt, str) else "") + completion


# A reference belongs to one text: an example sets both; the learner's own text clears it, so
# no score against another text's reference is ever shown.
REFERENCE_NOTE = "A reference belongs to one text: editing the text (or the languages) clears it."
REFERENCE_CLEARED = ("**Reference cleared:** it was written for the previous text. Paste one written for "
                     "this text to get a score, or run without one.")


# The examples' (text, reference) pairs: an example's reference sent with another text (edited
# without a keystroke the page noticed, or by a script) is dropped, never scored against.
SUMMARY_PAIRS = [(SUMMARY_EXAMPLE, SUMMARY_REFERENCE), (EIFFEL, EIFFEL_SUMMARY), (LETTER, LETTER_SUMMARY)]
TRANSLATION_PAIRS = [(LETTER_START, LETTER_GERMAN_START)]


def _own_reference(text, reference, pairs) -> tuple:
    """(the reference to score against, the example text it belongs to if it was dropped)."""
    ref = reference.strip() if isinstance(reference, str) else reference
    for example_text, example_ref in pairs:
        if ref == example_ref and (text.strip() if isinstance(text, str) else text) != example_text:
            return "", example_text
    return reference, None


def _say_dropped(r: dict, example_text) -> None:
    if example_text is not None:
        r["reference_dropped"] = f"it is the example's reference for: {example_text[:60]}…"
        r["notices"].insert(0, "The reference was not used: it belongs to an example's text, not to this one. "
                               "Paste a reference written for this text to get a score.")


def _text_edited(reference):
    """The learner changed the text: drop the reference that belonged to the old one."""
    if not (reference or "").strip():
        return gr.skip(), gr.skip()
    return "", REFERENCE_CLEARED


def _reference_set(reference):
    """An example (or the learner) put a reference in: the usual note again."""
    return REFERENCE_NOTE if (reference or "").strip() else gr.skip()


def _link_reference(edits: list, reference, note) -> None:
    for box in edits:
        box.input(_text_edited, [reference], [reference, note], queue=False, api_visibility="private")
    reference.change(_reference_set, [reference], [note], queue=False, api_visibility="private")


# The knobs each generation strategy uses; the others are greyed out (they would do nothing).
STRATEGY_KNOBS = {"greedy": set(), "sample": {"temperature", "top_k", "top_p", "seed"}, "beam": {"num_beams"}}
KNOB_ORDER = ("temperature", "top_k", "top_p", "num_beams", "seed")


def _knobs_for(strategy):
    used = STRATEGY_KNOBS.get(strategy, set(KNOB_ORDER))
    return [gr.update(interactive=k in used) for k in KNOB_ORDER]


# ------------------------------------------------------------------------------- build

def _model_box(task: str):
    return model_box(elem_id=f"pl-{task}-model", info=MODEL_BOX_INFO)


def _json(task: str):
    return raw_json(elem_id=f"pl-{task}-json")  # collapsed: the formatted result comes first


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
    ev = go_btn.click(run_classify, [text, batch, desc, model], [badge, plot, table, out],
                      api_name="classify", **BATCH_LANE)
    clear_on_error(ev, [badge, plot, table, out], box)
    _link("classify", {"text": text, "batch": batch}, ev, link_bar, go_btn)


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
    ev = go_btn.click(run_zero_shot, [text, labels, multi, template, batch, model], [badge, plot, table, out],
                      api_name="zero_shot", **BATCH_LANE)
    clear_on_error(ev, [badge, plot, table, out], box)
    _link("zero_shot", {"text": text, "labels": labels, "multi": multi, "template": template, "batch": batch},
          ev, link_bar, go_btn)


def _build_ner() -> None:
    with gr.Row():
        with gr.Column():
            text = Textbox(label="Text", lines=6, value=NER_EXAMPLE)
            agg = Radio(["simple", "first", "average", "max", "none"], value="simple",
                           label="Aggregation of sub-word tokens (dedicated models)")
            batch = _batch_box()
            model = _model_box("ner")
            go_btn = gr.Button("Find entities", variant="primary", elem_id="pl-ner-run")
            _see_it_elsewhere(text)
            gr.Examples([[NER_EXAMPLE, False], [NER_EXAMPLE_2, False], [LETTER, False],
                         ["\n".join([NER_EXAMPLE, NER_EXAMPLE_2]), True]], [text, batch],
                        example_labels=["Tim Cook at Apple", "Marie Curie", "The book's complaint letter",
                                        "Batch: two sentences"], cache_examples=False)
        with gr.Column():
            box = error_box("pl-ner-error")
            badge = gr.Markdown(elem_id="pl-ner-badge")
            hl = gr.HighlightedText(label="Entities in the text", show_legend=True, elem_id="pl-ner-highlight")
            table = gr.Dataframe(headers=show.ENTITY_COLUMNS[1:], label="Entities", wrap=True,
                                 elem_id="pl-ner-table")
            out = _json("ner")
            link_bar = _link_bar("ner", go_btn)
    ev = go_btn.click(run_ner, [text, agg, batch, model], [badge, hl, table, out], api_name="ner", **LONG_LANE)
    clear_on_error(ev, [badge, hl, table, out], box)
    _link("ner", {"text": text, "aggregation": agg, "batch": batch}, ev, link_bar, go_btn)


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
            hl = gr.HighlightedText(label="Answer in the context", show_legend=True, elem_id="pl-qa-highlight")
            table = gr.Dataframe(headers=["#", "score", "answer", "match", "start", "end"],
                                 label="Top-n spans (with no answer: the spans the model rejected)",
                                 wrap=True, column_widths=["8%", "12%", "44%", "12%", "12%", "12%"],
                                 # typed: an answer such as "1889" must not make the column numeric
                                 datatype=["number", "number", "str", "str", "number", "number"],
                                 elem_id="pl-qa-table")
            out = _json("qa")
            link_bar = _link_bar("qa", go_btn)
    ev = go_btn.click(run_qa, [context, question, top_n, model], [badge, answer, hl, table, out],
                      api_name="qa", **LONG_LANE)
    clear_on_error(ev, [badge, answer, hl, table, out], box)
    _link("qa", {"context": context, "question": question, "top_n": top_n}, ev, link_bar, go_btn)


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
    _link_reference([text], reference, note)
    outputs = [badge, summary, support, baseline, extractive, plot, scores, out]
    ev = go_btn.click(run_summarize, [text, max_new, min_new, beams, reference, model], outputs,
                      api_name="summarize", **engine_lane())
    clear_on_error(ev, outputs, box)
    _link("summarize", {"text": text, "max_new": max_new, "min_new": min_new, "beams": beams}, ev, link_bar,
          go_btn)


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
    _link_reference([text, src, tgt], reference, note)
    ev = go_btn.click(run_translate, [text, src, tgt, max_new, beams, reference, model],
                      [badge, translation, pair, out], api_name="translate", **engine_lane())
    clear_on_error(ev, [badge, translation, pair, out], box)
    _link("translate", {"text": text, "source": src, "target": tgt, "max_new": max_new, "beams": beams}, ev,
          link_bar, go_btn)


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
    inputs = [prompt, strategy, max_new, temperature, top_k, top_p, beams, seed, model]
    strategy.change(_knobs_for, [strategy], [temperature, top_k, top_p, beams, seed], queue=False,
                    api_visibility="private")
    # The button streams (not an API); /generate_text keeps its one-shot result for scripts.
    # No clear_on_error here: a Stop counts as a failure and would blank the text streamed so far.
    # The handler blanks the old result itself and puts an input error in the box.
    ev = go_btn.click(stream_generate, inputs, [badge, generated, counter, out, box], api_visibility="private",
                      **engine_lane())
    # Cancel first, then say so: a token already on its way must not overwrite the "stopped" line.
    stop_btn.click(None, None, None, cancels=[ev], queue=False, api_visibility="private").then(
        lambda c: (c or "").rstrip("…") + " · stopped by you", [counter], [counter], queue=False,
        api_visibility="private")
    api_btn = gr.Button(visible=False)
    api_btn.click(run_generate, inputs, [badge, generated, out], api_name="generate_text", **engine_lane())
    _link("generate_text", {"prompt": prompt, "strategy": strategy, "max_new": max_new, "temperature": temperature,
                            "top_k": top_k, "top_p": top_p, "beams": beams, "seed": seed}, ev, link_bar, go_btn)


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
    ev = go_btn.click(run_fill_mask, [text, top_k, model], [badge, plot, table, out], api_name="fill_mask",
                      **SHORT_LANE)
    clear_on_error(ev, [badge, plot, table, out], box)
    _link("fill_mask", {"text": text, "top_k": top_k}, ev, link_bar, go_btn)


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


def _link(task: str, inputs: dict, event, link_bar, go_btn) -> None:
    """Links for one task: ?tab=pipelines-<task> opens Pipelines at that task with these inputs
    (the model box is left out: a link never chooses which weights a visitor loads)."""
    links.register(f"pipelines-{task}", inputs, [event], link_bar, run=go_btn if task in CHEAP else None,
                   parent="pipelines", subtabs=_SUBTABS["tabs"])


def build() -> None:
    """Sub-tabs for the eight tasks, wired to their api_names."""
    gr.Markdown(intro_markdown(pipelines.serving_methods()))  # from the serving decision, never by hand
    with gr.Tabs(overflow_behavior="wrap", elem_id="pl-tasks") as tabs:
        _SUBTABS["tabs"] = tabs
        for name, task, build_task in SUBTABS:
            with gr.Tab(name, id=f"pipelines-{task}", elem_id=f"pl-{task}-tab"):
                build_task()
