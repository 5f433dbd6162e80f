"""Extractive question answering from start/end logits (transformers 5.3 removed the pipeline).

The question and the context are tokenised as a pair; a context longer than the model's
window is cut into overlapping windows (`stride` tokens of overlap) with the tokenizer's
`return_overflowing_tokens`. In each window the start and end logits over *context* tokens
are softmaxed, a span's score is p(start) * p(end), and the best spans are mapped back to
character offsets through the offset mapping. A span seen in two windows, or twice with
only trailing punctuation or white space between the two (`answer_key`), is kept once, with
its best score.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text
from backend.engines.tasks.text import forward_inputs, model_max_length


# What an answer may end with and still be the same answer: "at the age of 36" and "at the age
# of 36." (or with a closing quote, bracket or space) are one span, listed once.
_TRAILING = " \t\n\r.,;:!?…\"'”’)]"


def answer_key(text: str) -> str:
    """An answer without the white space around it and the punctuation after it."""
    return text.strip().rstrip(_TRAILING).strip()


@dataclass
class Span:
    answer: str
    score: float
    start: int  # character offsets in the context: context[start:end] == answer
    end: int
    window: int  # which stride window it came from

    def as_dict(self) -> dict:
        return asdict(self)


def best_spans(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    context_mask: np.ndarray,
    top_n: int = 3,
    max_answer_tokens: int = 30,
) -> list[tuple[int, int, float]]:
    """Best (start_token, end_token, score) in one window.

    Softmax over the context tokens only (others get -inf), then score every span with
    start <= end < start + max_answer_tokens by p_start * p_end.
    """
    mask = np.asarray(context_mask, dtype=bool)
    idx = np.flatnonzero(mask)  # only context tokens compete: the softmax runs over them
    if idx.size == 0:
        return []
    s = np.asarray(start_logits, dtype=np.float64)[idx]
    e = np.asarray(end_logits, dtype=np.float64)[idx]
    ps = np.exp(s - s.max())
    ps /= ps.sum()
    pe = np.exp(e - e.max())
    pe /= pe.sum()
    # p_start * p_end for start <= end < start + max_answer_tokens (positions among context tokens)
    scores = np.triu(np.tril(np.outer(ps, pe), k=max_answer_tokens - 1))
    flat = scores.ravel()
    k = min(top_n, int(np.count_nonzero(flat)))
    if k <= 0:
        return []
    best = np.argpartition(-flat, k - 1)[:k]
    best = best[np.argsort(-flat[best], kind="stable")]
    n = idx.size
    return [(int(idx[x // n]), int(idx[x % n]), float(flat[x])) for x in best]


WINDOW_BATCH = 8  # stride windows per forward pass; the request's budget is checked between batches


def _window_logits(model, enc, n_windows: int, batch: int = WINDOW_BATCH) -> tuple[np.ndarray, np.ndarray]:
    """Start/end logits of every window, `batch` windows per forward pass, checking the budget between."""
    inputs = forward_inputs(model, enc)
    starts, ends = [], []
    with torch.inference_mode():
        for lo in range(0, n_windows, batch):
            budget.check(f"read {lo} of {n_windows} windows of the context", "Ask about a shorter context.")
            out = model(**{k: v[lo:lo + batch] for k, v in inputs.items()})
            starts.append(out.start_logits.float().cpu().numpy())
            ends.append(out.end_logits.float().cpu().numpy())
    return np.concatenate(starts), np.concatenate(ends)


def answer_question(
    model,
    tokenizer,
    question: str,
    context: str,
    top_n: int = 3,
    max_length: int | None = None,
    stride: int = 128,
    max_answer_tokens: int = 30,
) -> dict:
    """Top-n answer spans of `question` in `context` -> dict with spans and window count."""
    question = check_text(question, "question")
    context = check_text(context, "context")
    if top_n < 1:
        raise InputError("top_n must be at least 1.")
    limit = max_length or min(model_max_length(model, tokenizer), 384)
    q_tokens = len(tokenizer(question, add_special_tokens=False)["input_ids"])
    if q_tokens > limit // 2:
        raise InputError(
            f"The question is {q_tokens} tokens long; keep it under {limit // 2} tokens."
        )
    # Room left for the context in a window; the overlap must be smaller than that.
    room = limit - q_tokens - 4
    stride = max(0, min(stride, room // 2))
    enc = tokenizer(
        question,
        context,
        truncation="only_second",
        max_length=limit,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=True,
        return_tensors="pt",
    )
    n_windows = enc["input_ids"].shape[0]
    start_logits, end_logits = _window_logits(model, enc, n_windows)
    offsets = enc["offset_mapping"].cpu().numpy()

    merged: dict[tuple[int, int], Span] = {}
    for w in range(n_windows):
        seq_ids = enc.sequence_ids(w)
        mask = np.array([sid == 1 for sid in seq_ids], dtype=bool)
        for ts, te, score in best_spans(
            start_logits[w], end_logits[w], mask, top_n=top_n, max_answer_tokens=max_answer_tokens
        ):
            c0, c1 = int(offsets[w][ts][0]), int(offsets[w][te][1])
            if c1 <= c0:
                continue
            key = (c0, c0 + len(answer_key(context[c0:c1])))  # "36" and "36." are one span
            if key not in merged or merged[key].score < score:
                merged[key] = Span(context[c0:c1], score, c0, c1, w)
    spans = sorted(merged.values(), key=lambda sp: -sp.score)[:top_n]
    return {
        "answers": [sp.as_dict() for sp in spans],
        "windows": int(n_windows),
        "max_length": int(limit),
        "stride": int(stride),
    }
