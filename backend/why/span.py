"""'Why this span?': a QA reader's answer span, explained (model-level: handed a model and a tokenizer).

The explained number is what the reader ranks spans by (`backend.engines.qa.reader`): the span's
start logit plus its end logit. The span is the reader's own answer to the question over the
whole context (`reader.answer`, as /qa gives it), or a span of the context the learner names.
Question and context are read as one pair, as the reader reads them; every question and context
token gets a score except the span's own tokens (removing one would remove the answer). When a
token is removed the rest closes up and the span is followed to its new place.
"""

from __future__ import annotations

import inspect

import torch

from backend.why.targets import Target, baseline_token, special_positions
from backend.engines.qa import reader
from backend.runtime.errors import InputError

MAX_TOKENS = 128


def _accepts_token_types(model) -> bool:
    try:
        return "token_type_ids" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _encode(tokenizer, model, question: str, context: str, max_tokens: int) -> dict:
    enc = tokenizer(question, context, return_offsets_mapping=True, truncation=False)
    ids = list(enc["input_ids"])
    if len(ids) > max_tokens:
        raise InputError(f"Question and context are {len(ids)} tokens together; 'why this span?' is computed for at "
                         f"most {max_tokens} tokens here (each method runs the reader once per token or more). "
                         "Keep the context to the sentences the answer is in.")
    extras = {}
    if "token_type_ids" in enc and _accepts_token_types(model):
        extras["token_type_ids"] = list(enc["token_type_ids"])
    return {"ids": ids, "offsets": [tuple(o) for o in enc["offset_mapping"]], "parts": enc.sequence_ids(0),
            "extras": extras}


def _span_tokens(offsets, parts, c0: int, c1: int) -> tuple[int, int]:
    """The first and last context tokens that cover characters c0..c1 of the context."""
    ctx = [i for i, p in enumerate(parts) if p == 1 and offsets[i][1] > offsets[i][0]]
    inside = [i for i in ctx if offsets[i][1] > c0 and offsets[i][0] < c1]
    if not inside:
        raise InputError("That span is not in the context: type words that occur in it.")
    return inside[0], inside[-1]


def _wanted_span(context: str, span: str) -> tuple[int, int]:
    at = context.lower().find(span.strip().lower())
    if at < 0 or not span.strip():
        raise InputError(f"'{span.strip()[:40]}' does not occur in the context: type a span of the context to "
                         "explain, or leave it empty for the reader's answer.")
    return at, at + len(span.strip())


def answer_span(model, tokenizer, question: str, context: str, span: str | None = None,
                max_tokens: int = MAX_TOKENS) -> tuple[Target, dict]:
    """The start + end logit of the reader's answer span (or of `span`, a text of the context)."""
    rows = _encode(tokenizer, model, question, context, max_tokens)
    ids, offsets, parts = rows["ids"], rows["offsets"], rows["parts"]
    said = reader.answer(model, tokenizer, question, context, top_n=1)
    if span:
        c0, c1 = _wanted_span(context, span)
    elif said["answers"]:
        c0, c1 = said["answers"][0]["start"], said["answers"][0]["end"]
    else:
        raise InputError("The reader found no span of the context to rank for this question: nothing to explain.")
    first, last = _span_tokens(offsets, parts, c0, c1)
    width = last - first
    names = sorted(rows["extras"])

    def score(ids_, mask, focus, *extra):
        out = model(input_ids=ids_, attention_mask=mask, **dict(zip(names, extra)))
        rows_ = torch.arange(len(focus), device=out.start_logits.device)
        return out.start_logits.float()[rows_, focus] + out.end_logits.float()[rows_, focus + width]

    specials = special_positions(tokenizer, ids) | {i for i, p in enumerate(parts) if p is None}
    positions = [i for i in range(len(ids)) if i not in specials and not first <= i <= last]
    if not positions:
        raise InputError("Question and context have no tokens besides the answer to explain it by.")
    t = Target(model, ids, positions, score, "", baseline_token(tokenizer), rollout_rows="focus", focus=first,
               extras=rows["extras"])
    c0, c1 = offsets[first][0], offsets[last][1]
    answer = context[c0:c1]
    t.quantity = f"start + end logit of the span '{answer}'"
    best = said["answers"][0] if said["answers"] else None
    info = {"offsets": offsets, "parts": ["question" if p == 0 else "context" if p == 1 else None for p in parts],
            "texts": {"question": question, "context": context},
            "span": {"answer": answer, "start": int(c0), "end": int(c1), "tokens": [int(first), int(last)],
                     "chosen": "asked" if span else "the reader's answer"},
            "reader": {"answer": None if said["no_answer"] or best is None else best["answer"],
                       "best_span": None if best is None else best["answer"], "no_answer": bool(said["no_answer"]),
                       "margin": said["margin"], "threshold": said["threshold"], "null_logit": said["null_logit"]}}
    with torch.no_grad():
        info["span"]["logit"] = round(t.value(), 6)
    info["span"]["null_logit_here"] = round(_null_logit(model, t), 6)
    return t, info


def _null_logit(model, t: Target) -> float:
    """[CLS]'s start + end logit on this input: the reader's 'no answer' on the same scale."""
    with torch.no_grad():
        ids, mask, _, ext = t.full_inputs()
        out = model(input_ids=ids, attention_mask=mask, **ext)
        return float(out.start_logits[0, 0] + out.end_logits[0, 0])

