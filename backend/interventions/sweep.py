"""The "most important heads" sweep: remove each head of one layer in turn, measure, rank.

Decoder: the KL divergence at the last position between the next-token distribution before
and after removing the head (also the mean KL over every position, and whether the top-1
changed). Encoder: 1 - cosine between the sentence embeddings before and after.
One forward per head, the request's budget checked before each: a stop returns the heads
measured so far, ranked, with `complete: false`. Ties are broken by head index, so the
same input always gives the same ranking.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

from backend.runtime import budget
from backend.interventions import effects, hooks
from backend.interventions.spec import Edit


def rank(rows: list[dict], key: str) -> list[dict]:
    """Rows sorted by `key`, largest first, ties by head index; each gets its rank (1 = most important)."""
    ranked = sorted(rows, key=lambda r: (-r[key], r["head"]))
    for i, r in enumerate(ranked, 1):
        r["rank"] = i
    return ranked


def _measure(model, run: Callable, base: torch.Tensor, decoder: bool) -> dict:
    out = run()
    if decoder:
        per = effects.kl(base, out)
        return {"score": float(per[-1]), "kl_last": float(per[-1]), "kl_mean": float(per.mean()),
                "top1_changed": bool(base[-1].argmax() != out[-1].argmax())}
    cos = effects.cosine(effects.sentence_vector(base), effects.sentence_vector(out))
    return {"score": 1.0 - cos, "cosine": cos}


def sweep_layer(model, layer: int, run: Callable[[], torch.Tensor], decoder: bool,
                progress: Callable | None = None) -> dict:
    """Rank every head of `layer` by what removing it alone changes. `run()` is one forward of
    the input (logits for a decoder, the last hidden state for an encoder)."""
    lay = hooks.layout(model)
    base = run()
    rows: list[dict] = []
    finish = None
    start = time.perf_counter()
    for head in range(lay.n_heads):
        b = budget.current()
        if b is not None and b.expired():
            finish = b.finish_reason
            break
        if progress is not None:
            progress(head / lay.n_heads, f"Layer {layer}: removing head {head} of {lay.n_heads}")
        t0 = time.perf_counter()
        with hooks.ablate(model, [Edit(layer, "head", head, 0.0)]):
            row = _measure(model, run, base, decoder)
        rows.append({"head": head, "seconds": round(time.perf_counter() - t0, 4), **row})
        budget.fair_threads()
    elapsed = time.perf_counter() - start
    return {
        "layer": layer,
        "metric": "kl_last" if decoder else "one_minus_cosine",
        "heads": rank(rows, "score"),
        "measured": len(rows),
        "num_heads": lay.n_heads,
        "complete": len(rows) == lay.n_heads,
        "finish_reason": finish,
        "seconds": round(elapsed, 4),
        "seconds_per_head": round(elapsed / len(rows), 4) if rows else None,
    }
