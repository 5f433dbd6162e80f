"""What the Why tab's events call: /attribute, and the formatting of its plain result."""

from __future__ import annotations

import json

import gradio as gr

import backend.why as attribution
from components.shell import md_text, model_badge
from components.shell.badge import model_time
from components.why import plots

TASK_CHOICES = [("Sentiment (classifier)", "sentiment"), ("Your Train-tab classifier", "session"),
                ("Zero-shot", "zero_shot"),
                ("NER: one token's label", "ner"), ("QA: why this answer span", "qa"),
                ("Decoder: next token", "next_token")]
HANDED_KEYS = ("text", "labels", "word", "question", "label")  # what a packed hand-off may set, in this order
MAX_HANDED = 20_000


def summary_md(r: dict) -> str:
    c = r["checks"]
    lines = [f"**Explained:** the {md_text(r['quantity'])} = **{r['value']:.4f}**" + _prediction(r)]
    focus = r["prediction"].get("focus") or {}
    if focus.get("why_not_scored"):
        lines.append("**Not in the scores:** " + md_text(focus["why_not_scored"]))
    if c.get("scale"):
        lines.append("**Colours:** red raises, blue lowers. " + md_text(c["scale"]["text"]))
    comp = c.get("completeness")
    if comp:
        rel = comp.get("relative_gap")
        verdict = comp.get("verdict") or {}
        lines.append(f"**Completeness** (integrated gradients, {comp['steps']} steps): scores sum to "
                     f"{comp['sum_of_attributions']:.4f}; f(text) - f(baseline) = {comp['difference']:.6f}; gap "
                     f"{comp['gap']:.6f}" + ("" if rel is None else f" = {100 * rel:.2f}% of it") + ": "
                     + md_text(verdict.get("text", "")) + (" " + md_text(verdict["suggestion"]) if verdict.get("suggestion")
                                                           else "") + " " + md_text(c["meanings"]["completeness"]))
    if c.get("deletion"):
        order = ", ".join(plots.SHORT[m] for m in c["deletion"]["ranking"])
        claim = c.get("faithfulness") or {}
        head = (f"**Most faithful here:** {md_text(claim['text'])}" if claim.get("method")
                else f"**Most faithful here: not claimed.** {md_text(claim.get('text', ''))}")
        lines.append(f"{head} (deletion ranking: {order}). " + md_text(c["meanings"]["deletion"]))
    if c.get("agreement"):
        lines.append("**Agreement:** " + md_text(c["meanings"]["agreement"]))
    for note in c.get("notes") or []:
        lines.append(f"**{NOTE_TITLES.get(note['kind'], 'Note')}:** " + md_text(note["text"]))
    lines.append("Attention rollout and raw attention are read off the attention weights, not off the output: "
                 "the raw last-layer attention is shown as what it is, not as an explanation.")
    t = r["timing"]
    lines.append(f"This run: {model_time(r['seconds'])} (one forward pass {1000 * t['one_forward']:.0f} ms; "
                 + ", ".join(f"{plots.SHORT[m]} {t[m]:.1f} s" for m in r["methods"]) + f"; checks {t['checks']:.1f} s).")
    return "\n\n".join(lines)


NOTE_TITLES = {"attention_sink": "Why rollout sits on the first token", "saturation": "Saturation"}


def _prediction(r: dict) -> str:
    p = r["prediction"]
    if "target" in p:
        said = f" · the model's next token: '{md_text(p['predicted']['token'])}' ({p['predicted']['probability']:.3f})"
        if "contrast" in p:
            said += f" · contrast '{md_text(p['contrast']['token'])}' ({p['contrast']['probability']:.3f})"
        return said
    if "span" in p:
        said = f" · span '{md_text(p['span']['answer'])}' ({p['span']['chosen']})"
        reader = p["reader"]
        if reader["no_answer"]:
            said += " · the reader itself answers 'no answer' here (the [CLS] span wins)"
        elif p["span"]["chosen"] == "asked" and reader["answer"] is not None:
            said += f" · the reader's answer: '{md_text(reader['answer'])}'"
        return said
    if "focus" in p:
        return f" · token '{md_text(p['focus']['token'])}' tagged {md_text(p['label'])}"
    return f" · label {md_text(p['label'])}"


def run_attribute(text, task, labels, label, target, contrast, word, methods, steps, random_orders,
                  question=None, model_box=None, request: gr.Request = None, progress=gr.Progress()):
    """/attribute: per-token scores by several methods for one prediction, and the checks of them.
    `question`: QA's question (`text` is then the context); `model_box`: another model for the prediction
    (NER: "multilingual" for chapter 4's model)."""
    session = getattr(request, "session_hash", None) if request is not None else None
    r = attribution.attribute(text, task=task, label=label or None, target=target or None,
                              contrast=contrast or None, labels=labels or None, word=word or None,
                              methods=methods, steps=steps, random_orders=random_orders, session_id=session,
                              question=question or None, override=model_box or None, progress=progress)
    headers, rows = plots.table_rows(r)
    return (r, model_badge(r["model"]), summary_md(r), plots.heat_strip(r),
            gr.update(value=rows, headers=headers, visible=True), plots.deletion_figure(r), plots.agreement_figure(r))


def unpack(value):
    """A packed hand-off (JSON: {"text": ..., "labels": ...}, from a tab whose prediction needs more
    than one input) -> updates for text, labels, word, question, label, and the packed box emptied.
    Anything else (not JSON, not text values) sets no input; an empty box changes nothing."""
    if not isinstance(value, str) or not value:
        return [gr.skip() for _ in HANDED_KEYS] + [gr.skip()]
    try:
        packed = json.loads(value) if len(value) <= MAX_HANDED else None
    except ValueError:
        packed = None
    packed = packed if isinstance(packed, dict) else {}
    return [packed[k] if isinstance(packed.get(k), str) else gr.skip() for k in HANDED_KEYS] + [""]
