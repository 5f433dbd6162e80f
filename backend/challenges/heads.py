"""Checks on the encoder's attention heads (chapters 3 and 11): the learner names a sentence, a layer and a
head; the check runs the encoder on the sentence and measures where that head's attention goes."""

from __future__ import annotations

import numpy as np

from backend.challenges import models
from backend.runtime.errors import InputError

MIN_TOKENS = 6  # tokens of the sentence (special tokens left out) a head's habit is measured on
LONG_TOKENS = 12  # chapter 11's challenges: a window is only sparse on a longer text


def _head(v: dict, min_tokens: int = MIN_TOKENS):
    """(AttentionResult, the head's (T, T) weights, the indices of the sentence's own tokens)."""
    res = models.attention(v["text"])
    layers, heads = res.attention.shape[:2]
    if v["layer"] >= layers or v["head"] >= heads:
        raise InputError(f"The encoder has layers 0-{layers - 1} and heads 0-{heads - 1}; got layer {v['layer']}, "
                         f"head {v['head']}.")
    own = [i for i, s in enumerate(res.special) if not s]
    if len(own) < min_tokens:
        raise InputError(f"The sentence is {len(own)} tokens long; write at least {min_tokens} so that a head's "
                         "habit shows.")
    return res, res.attention[v["layer"], v["head"]], own


def _where(res, weights: np.ndarray, rows: list[int], n: int = 10) -> list[dict]:
    return [{"token": res.tokens[q], "looks_at": res.tokens[int(np.argmax(weights[q]))],
             "weight": round(float(weights[q].max()), 3)} for q in rows[:n]]


def _best(res, score) -> dict:
    """The head of the whole encoder that scores best on this sentence (said when the named one fails)."""
    table = np.array([[score(res.attention[layer, head]) for head in range(res.attention.shape[1])]
                      for layer in range(res.attention.shape[0])])
    layer, head = np.unravel_index(int(np.argmax(table)), table.shape)
    return {"layer": int(layer), "head": int(head), "share": round(float(table[layer, head]), 3)}


def previous_token(v: dict):
    """Chapter 3: a head that sends most of each token's attention to the token before it."""
    res, w, own = _head(v)
    rows = [q for q in own if q - 1 in own]

    def share(m):
        return float(np.mean([m[q, q - 1] for q in rows]))

    s = share(w)
    ev = {"share_to_previous": round(s, 3), "per_token": _where(res, w, rows), "tokens": res.tokens}
    if s >= PREVIOUS:
        return True, (f"Layer {v['layer']} head {v['head']} gives the previous token {s:.0%} of each token's "
                      "attention on average."), ev
    ev["best_head_here"] = _best(res, share)
    return False, f"Layer {v['layer']} head {v['head']} gives the previous token only {s:.0%} (needs {PREVIOUS:.0%}).", ev


PREVIOUS = 0.5


def special_sink(v: dict):
    """Chapter 3: a head that parks most attention on [CLS] and [SEP] (a head with nothing to do)."""
    res, w, own = _head(v)
    specials = [i for i, s in enumerate(res.special) if s]

    def share(m):
        return float(np.mean([m[q, specials].sum() for q in own]))

    s = share(w)
    ev = {"share_to_special": round(s, 3), "per_token": _where(res, w, own), "special_tokens":
          [res.tokens[i] for i in specials]}
    if s >= SINK:
        return True, f"Layer {v['layer']} head {v['head']} sends {s:.0%} of the sentence's attention to the special tokens.", ev
    ev["best_head_here"] = _best(res, share)
    return False, f"Layer {v['layer']} head {v['head']} sends only {s:.0%} to the special tokens (needs {SINK:.0%}).", ev


SINK = 0.8


def _window_share(m: np.ndarray, rows: list[int], window: int) -> float:
    return float(np.mean([m[q, max(0, q - window):q + window + 1].sum() for q in rows]))


def window_enough(v: dict):
    """Chapter 11: a head that a sliding window of at most 3 tokens each side keeps almost whole."""
    res, w, own = _head(v, LONG_TOKENS)
    s = _window_share(w, own, v["window"])
    ev = {"kept_by_window": round(s, 3), "window": v["window"], "tokens": len(res.tokens),
          "scored_pairs": {"full": len(res.tokens) ** 2,
                           "window": int(sum(min(len(res.tokens), q + v["window"] + 1) - max(0, q - v["window"])
                                             for q in range(len(res.tokens))))}}
    if s >= KEPT:
        return True, (f"A window of {v['window']} keeps {s:.0%} of layer {v['layer']} head {v['head']}'s attention "
                      f"while scoring {ev['scored_pairs']['window']} of {ev['scored_pairs']['full']} pairs."), ev
    return False, f"A window of {v['window']} keeps only {s:.0%} of this head's attention (needs {KEPT:.0%}).", ev


KEPT = 0.9


def long_range(v: dict):
    """Chapter 11: a head that reaches far: a window of 3 tokens each side keeps under half of it."""
    res, w, own = _head(v, LONG_TOKENS)
    s = _window_share(w, own, 3)
    far = [{"token": res.tokens[q], "looks_at": res.tokens[int(np.argmax(w[q]))],
            "distance": abs(int(np.argmax(w[q])) - q)} for q in own[:12]]
    ev = {"kept_by_window_3": round(s, 3), "per_token": far}
    if s < FAR:
        return True, (f"A window of 3 would keep only {s:.0%} of layer {v['layer']} head {v['head']}'s attention: "
                      "sliding-window attention would lose what this head reads."), ev
    return False, f"A window of 3 keeps {s:.0%} of this head's attention (needs under {FAR:.0%}): it reads nearby.", ev


FAR = 0.5
