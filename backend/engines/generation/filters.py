"""The sampling math of the book's chapter 5, written out in numpy.

These are the reference definitions: the plots use them to draw the temperature overlay and
the top-p cut, and the tests compare what `generate` did against them. They work on one
distribution (a 1-D array of logits or probabilities); nothing here touches a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Softmax of `logits / temperature` in float64 (-inf logits get probability 0)."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - np.max(z)
    e = np.exp(z)
    return e / e.sum()


def entropy(probs: np.ndarray) -> float:
    """Shannon entropy in nats; zero-probability tokens contribute nothing."""
    p = np.asarray(probs, dtype=np.float64)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def top_k_mask(probs: np.ndarray, top_k: int) -> np.ndarray:
    """Boolean mask of the tokens that survive a top-k cut (0 = no cut).

    Like transformers' TopKLogitsWarper: every token whose probability is >= the k-th largest
    survives (ties at the boundary survive too).
    """
    p = np.asarray(probs, dtype=np.float64)
    if top_k <= 0 or top_k >= p.size:
        return np.ones(p.shape, dtype=bool)
    kth = np.sort(p)[::-1][top_k - 1]
    return p >= kth


def top_p_mask(probs: np.ndarray, top_p: float) -> np.ndarray:
    """Boolean mask of the nucleus: the smallest set of most likely tokens whose mass reaches top_p.

    A token survives when the mass of the tokens ranked above it is still below `top_p`, so
    the token that crosses the threshold is kept (as in transformers' TopPLogitsWarper).
    """
    p = np.asarray(probs, dtype=np.float64)
    if top_p >= 1.0:
        return np.ones(p.shape, dtype=bool)
    # transformers' formulation: sort ascending, drop the tail whose mass is <= 1 - top_p
    order = np.argsort(p, kind="stable")
    tail = np.cumsum(p[order]) <= 1 - top_p
    tail[-1] = False  # at least one token always survives
    mask = np.ones(p.shape, dtype=bool)
    mask[order[tail]] = False
    return mask


def filtered_distribution(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """The distribution sampling draws from: temperature, then top-k, then top-p, renormalised.

    This is transformers' warper order (temperature -> top-k -> top-p); top-p is computed on the
    distribution that remains after top-k.
    """
    probs = softmax(logits, temperature)
    keep = top_k_mask(probs, top_k)
    probs = np.where(keep, probs, 0.0)
    probs = probs / probs.sum()
    keep = top_p_mask(probs, top_p)
    probs = np.where(keep, probs, 0.0)
    return probs / probs.sum()


def cumulative_curve(probs: np.ndarray, top_p: float | None = None, max_points: int = 200) -> dict:
    """Sorted probabilities and their running sum, with where a top-p cut falls.

    Returns plain lists for plotting: `ranks` (1-based), `cumulative`, `cut_rank` (how many
    tokens survive top_p, or None).
    """
    p = np.sort(np.asarray(probs, dtype=np.float64))[::-1]
    cum = np.cumsum(p)
    n = int(min(max_points, p.size))
    cut = int(top_p_mask(probs, top_p).sum()) if top_p is not None else None
    if cut is not None and cut > n:
        n = int(min(p.size, cut + 10))
    return {"ranks": list(range(1, n + 1)), "cumulative": cum[:n].tolist(), "cut_rank": cut}


def cut_curve(probs: np.ndarray, top_p: float = 1.0, top_k: int = 0, max_points: int = 200) -> dict:
    """The curve top-p really cuts: the distribution after top-k (renormalised, as generate's
    warpers do), its running sum, and `cut_rank`: how many tokens survive both cuts (the step
    table's "tokens left"; with top_p off, all that top-k leaves)."""
    p = np.asarray(probs, dtype=np.float64)
    keep = top_k_mask(p, top_k)
    p = np.where(keep, p, 0.0)
    p = p / p.sum()
    survivors = int((keep & top_p_mask(p, top_p)).sum())
    curve = cumulative_curve(p, top_p if top_p < 1 else None, max_points)
    curve["cut_rank"] = survivors
    return curve


def distinct_n(token_ids: Sequence[int], n: int) -> float:
    """Distinct-n: unique n-grams / all n-grams of a sequence (1.0 = no repetition).

    Computed on model tokens; 0.0 for a sequence shorter than n.
    """
    ids = list(token_ids)
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    if not grams:
        return 0.0
    return len(set(grams)) / len(grams)


def perplexity(sum_logprob: float, n_tokens: int) -> float:
    """exp(-mean token log-prob): the book's measure of how surprised the model is by its own text."""
    if n_tokens <= 0:
        return float("nan")
    return float(np.exp(-sum_logprob / n_tokens))
