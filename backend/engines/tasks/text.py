"""Small helpers shared by the Pipelines task runners (input checks, lengths, devices)."""

from __future__ import annotations

import inspect

import numpy as np

from backend.runtime.errors import InputError
from backend.runtime.validation import check_text

MAX_BATCH_LINES = 64  # batch mode: lines per request
# A text longer than the model reads is tagged in overlapping windows: two windows share a quarter of the
# model's window, at most 128 tokens (the token-classification pipeline's `stride`)
MAX_WINDOW_STRIDE = 128
WINDOW_STRIDE_SHARE = 4


def window_stride(limit: int) -> int:
    """The tokens two windows share over a text longer than `limit` tokens."""
    return min(MAX_WINDOW_STRIDE, limit // WINDOW_STRIDE_SHARE)


def check_batch(texts, what: str = "text") -> list[str]:
    """A batch of texts: non-empty lines, at most MAX_BATCH_LINES."""
    if isinstance(texts, str):
        texts = [texts]
    lines = [t.strip() for t in (texts or []) if isinstance(t, str) and t.strip()]
    if not lines:
        raise InputError(f"The {what} is empty: type or paste some text, or pick an example.")
    if len(lines) > MAX_BATCH_LINES:
        raise InputError(
            f"{len(lines)} lines given; batch mode takes at most {MAX_BATCH_LINES}. Split the batch."
        )
    for line in lines:
        check_text(line)
    return lines


def ranked_labels(text: str, labels, scores, **per_label) -> dict:
    """One classification result: labels best first, with their scores (and any other per-label rows)."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    result = {"sequence": text, "labels": [labels[j] for j in order], "scores": [float(scores[j]) for j in order]}
    for name, values in per_label.items():
        result[name] = [float(values[j]) for j in order]
    return result


def split_lines(text: str) -> list[str]:
    """Batch mode input: one text per non-empty line."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def model_max_length(model, tokenizer, default: int = 512) -> int:
    """Tokens the model can read: the smaller of the tokenizer's and the position table's."""
    candidates = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        candidates.append(tok_max)
    cfg = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_seq_len"):
        value = getattr(cfg, name, None)
        if isinstance(value, int) and value > 0:
            candidates.append(value)
            break
    return min(candidates) if candidates else default


def device_of(model):
    try:
        return next(model.parameters()).device
    except (StopIteration, AttributeError):
        return "cpu"


def forward_inputs(model, enc) -> dict:
    """Keep only the tensors `model.forward` accepts (DistilBert takes no token_type_ids)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    accepts_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    device = device_of(model)
    out = {}
    for key, value in dict(enc).items():
        if key in ("offset_mapping", "overflow_to_sample_mapping", "special_tokens_mask"):
            continue
        if key in params or (accepts_kwargs and key in ("input_ids", "attention_mask")):
            out[key] = value.to(device) if hasattr(value, "to") else value
    return out


def truncation_notice(n_tokens: int, limit: int, what: str = "text") -> str:
    return (
        f"The {what} is {n_tokens} tokens long; the model reads at most {limit}, "
        f"so only the first {limit} tokens were used."
    )
