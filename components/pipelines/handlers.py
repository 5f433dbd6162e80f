"""What the Pipelines tab's events call: one handler per task (the API names /classify ... /generate_text), and
the lane readers that tell admission whether the server will do a request's generation (the tab declares
each handler with its planner: components/pipelines/ui.py)."""

from __future__ import annotations

import contextlib
import logging

import gradio as gr

from backend import pipelines
from backend.runtime.errors import LabError
from components.pipelines import plots as show
from components.pipelines import summary_view
from components.pipelines.references import SUMMARY_PAIRS, TRANSLATION_PAIRS, _own_reference, _say_dropped
from components.shell import server_or_long_slot, md_text
from components.shell.plans import current


LANGUAGES = [("English", "en"), ("German", "de"), ("French", "fr"), ("Spanish", "es"),
             ("Italian", "it"), ("Dutch", "nl")]
MODEL_BOX_INFO = ("Empty: the profile's model. Or a Hugging Face Hub id, or a local directory "
                  "saved with save_pretrained().")


def run_classify(text, batch, label_descriptions, model_box, request: gr.Request = None, progress=gr.Progress()):
    # The session id lets a session that chose "Use in Pipelines" (Train tab) get its own classifier.
    r = pipelines.classify(text, batch, label_descriptions, override=model_box, progress=progress,
                           session_id=getattr(request, "session_hash", None))
    return show.badge(r), show.label_bars(r["results"], "Label scores"), show.label_table(r["results"]), r


def run_zero_shot(text, labels, multi_label, template, batch, model_box, progress=gr.Progress()):
    r = pipelines.zero_shot(text, labels, multi_label, template, batch, override=model_box, progress=progress)
    title = "Independent label scores (multi-label)" if r["multi_label"] else "Label scores (sum to 1)"
    return (show.badge(r), show.label_bars(r["results"], title, multi_label=bool(r["multi_label"])),
            show.label_table(r["results"]), r)


def run_ner(text, aggregation, batch, model_box, progress=gr.Progress()):
    r = pipelines.ner(text, aggregation, batch, override=model_box, progress=progress)
    res = r["results"]
    highlight = show.entity_highlight([x["text"] for x in res], [x["entities"] for x in res])
    table = gr.update(value=show.entity_rows(res), label=show.entity_table_label(res))
    return show.badge(r), highlight, table, r


def run_qa(context, question, top_n, model_box, progress=gr.Progress()):
    r = pipelines.qa(context, question, top_n, override=model_box, progress=progress)
    return show.badge(r), show.answer_markdown(r), show.answer_highlight(r), show.answer_rows(r), r


def run_summarize(text, max_new_tokens, min_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    reference, dropped = _own_reference(text, reference, SUMMARY_PAIRS)
    plan = current(_summary_plan, (text, max_new_tokens, min_new_tokens, num_beams, reference, model_box))
    with server_or_long_slot(not plan.long, "summary"):
        r = pipelines.summarize(text, max_new_tokens, min_new_tokens, num_beams, reference,
                                override=model_box, progress=progress, plan=plan)
    _say_dropped(r, dropped)
    summary = gr.update(value=r["summary"], label=show.output_label(r, "Summary", "summarise"))
    base = r["baseline"]
    baseline = gr.update(value=base["summary"], label=f"Baseline: {base['name']}")
    extractive = gr.update(value=(r.get("extractive") or {}).get("summary", ""), label=summary_view.extractive_label(r))
    return (show.badge(r), summary, summary_view.support_html(r), baseline, extractive, show.rouge_bars(r),
            show.rouge_table(r), r)


def run_translate(text, source, target, max_new_tokens, num_beams, reference, model_box, progress=gr.Progress()):
    reference, dropped = _own_reference(text, reference, TRANSLATION_PAIRS)
    plan = current(_translation_plan, (text, source, target, max_new_tokens, num_beams, reference, model_box))
    with server_or_long_slot(not plan.long, "translation"):
        r = pipelines.translate(text, source, target, max_new_tokens, num_beams, reference,
                                override=model_box, progress=progress, plan=plan)
    _say_dropped(r, dropped)
    translation = gr.update(value=r["translation"], label=show.output_label(r, "Translation", "translate"))
    return show.badge(r), translation, show.bleu_line(r), r


def run_fill_mask(text, top_k, model_box, progress=gr.Progress()):
    r = pipelines.fill_mask(text, top_k, override=model_box, progress=progress)
    return show.badge(r), show.mask_bars(r), show.mask_rows(r["candidates"]), r


def run_generate(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box,
                 progress=gr.Progress()):
    plan = current(_generation_plan, (prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed,
                                      model_box))
    with server_or_long_slot(not plan.long, "generation"):
        r = pipelines.generate_text(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed,
                                    override=model_box, progress=progress, plan=plan)
    return show.badge(r), r["generated_text"], r


def stream_generate(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed, model_box,
                    progress=gr.Progress()):
    """The Generate button: the text grows token by token, with a counter; then the result."""
    plan = current(_generation_plan, (prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, seed,
                                      model_box))
    stream = pipelines.generate_text_stream(prompt, strategy, max_new_tokens, temperature, top_k, top_p,
                                            num_beams, seed, override=model_box, progress=progress, plan=plan)
    total = max_new_tokens
    first = show.token_counter(0, total)
    if strategy == "beam":
        first = "Beam search keeps several sequences: the text shows when it is done…"
    hidden = gr.update(value="", visible=False)
    yield "", "", first, None, hidden  # no stale result while this one runs
    try:
        with server_or_long_slot(not plan.long, "generation"), contextlib.closing(stream):
            for completion, n, r in stream:
                if r is None:
                    yield gr.skip(), _joined(prompt, completion), show.token_counter(n, total), gr.skip(), gr.skip()
                else:
                    yield show.badge(r), r["generated_text"], show.token_counter(n, total, r), r, gr.skip()
    except LabError as exc:  # shown inline only: a raised error would badge every output "Error"
        logging.getLogger("transformers_lab.input").info("stream_generate: %s", str(exc).replace("\n", " ")[:300])
        yield "", "", "", None, gr.update(value=f"**⚠️ {md_text(str(exc))}**", visible=True)


# With a generation server these handlers are in the decode lane (common.server_lane): the server
# batches a class's requests; what stays here (a model-box model, beams, sampling for the instruct
# fallbacks, the server down) is long work and takes the long lane's slot first. Each reader gets the
# handler's positional inputs and asks the backend whether the server will do the work (no network).
def _beams(value) -> int:
    try:
        return int(float(value or 0))
    except (TypeError, ValueError, OverflowError):  # "many", inf: the handler refuses it in its own words
        return 0


def _summary_plan(args: tuple):
    text, max_new, min_new, beams, reference, model = (tuple(args) + (None,) * 6)[:6]
    return pipelines.plan("summarize", model if isinstance(model, str) else None, {"num_beams": _beams(beams)})


def _translation_plan(args: tuple):
    text, src, tgt, max_new, beams, reference, model = (tuple(args) + (None,) * 7)[:7]
    return pipelines.plan("translate", model if isinstance(model, str) else None, {"num_beams": _beams(beams)})


def _generation_plan(args: tuple):
    prompt, strategy, max_new, temperature, top_k, top_p, beams, seed, model = (tuple(args) + (None,) * 9)[:9]
    settings = {"strategy": strategy, "max_new_tokens": max_new, "temperature": temperature, "top_k": top_k,
                "top_p": top_p, "num_beams": beams, "seed": seed}
    return pipelines.plan("generate_text", model if isinstance(model, str) else None, settings)


def _joined(prompt, completion: str) -> str:
    return (prompt if isinstance(prompt, str) else "") + completion
