"""The sampling math of the book's chapter 5, written out in numpy.

These are the reference definitions: the plots use them to draw the temperature overlay and
the top-p cut, and the tests compare what `generate` did against them. They work on one
distribution (a 1-D array of logits or probabilities); nothing here touches a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


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


def _topk_threshold(values: torch.Tensor, top_k: int) -> torch.Tensor:
    """The k-th largest value, found as TopKLogitsWarper finds it (torch.topk)."""
    return torch.topk(values, min(top_k, values.numel()))[0][-1]


def _nucleus_removed(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    """TopPLogitsWarper's own steps on float32 scores: sort ascending (torch.sort, so ties fall
    in the same order), softmax and running sum in float32, drop the tail whose mass is
    <= 1 - top_p (compared in float32: 1 - 0.8 = 0.19999999999999996 in float64 is 0.2 there),
    always keep the most likely token. Returns the removed mask in the original order."""
    sorted_scores, order = torch.sort(scores, descending=False)
    cumulative = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
    removed_sorted = cumulative <= (1 - top_p)
    removed_sorted[-1:] = False
    return removed_sorted.scatter(0, order, removed_sorted)


def _log_probs(p: np.ndarray) -> torch.Tensor:
    """Probabilities as the scores a warper sees: float32 log-probabilities (0 -> -inf). Two
    probabilities a float32 step apart may share one log: the masks decide on the logs."""
    with np.errstate(divide="ignore"):
        return torch.from_numpy(np.ascontiguousarray(np.log(p)))


def top_k_mask(probs: np.ndarray, top_k: int) -> np.ndarray:
    """Boolean mask of the tokens that survive a top-k cut (0 = no cut).

    As transformers' TopKLogitsWarper does it (float32 log-probabilities, torch.topk): every
    token whose probability is >= the k-th largest survives (ties at the boundary survive too), but a token
    of probability 0 never does (generate's survivors are the tokens left with a finite score).
    """
    p = np.asarray(probs, dtype=np.float32)
    if top_k <= 0 or top_k >= p.size:
        return np.ones(p.shape, dtype=bool)
    scores = _log_probs(p)
    return ((scores >= _topk_threshold(scores, top_k)) & (scores > float("-inf"))).numpy()


def top_p_mask(probs: np.ndarray, top_p: float) -> np.ndarray:
    """Boolean mask of the nucleus: the smallest set of most likely tokens whose mass reaches top_p.

    A token survives when the mass of the tokens ranked below it is above 1 - top_p, so the
    token that crosses the threshold is kept. Computed as transformers' TopPLogitsWarper does, in
    float32 on the log-probabilities (see `_nucleus_removed`); tokens of probability 0 never
    survive a cut. top_p >= 1 is no cut (generate then adds no top-p warper at all).
    """
    p = np.asarray(probs, dtype=np.float32)
    if top_p >= 1.0:
        return np.ones(p.shape, dtype=bool)
    scores = _log_probs(p)
    return (~_nucleus_removed(scores, top_p) & (scores > float("-inf"))).numpy()


def warped_scores(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """What `generate`'s warpers leave of one step's logits, in their order and dtype (float32):
    temperature (skipped at 1), top-k (skipped at 0), top-p (skipped at >= 1); a cut token's
    score is -inf. The tokens sampling can pick are those with a finite score."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    scores = torch.from_numpy(np.ascontiguousarray(np.asarray(logits, dtype=np.float32)))
    if temperature != 1.0:
        scores = scores / temperature
    if 0 < top_k:
        scores = scores.masked_fill(scores < _topk_threshold(scores, top_k), float("-inf"))
    if top_p < 1.0:
        scores = scores.masked_fill(_nucleus_removed(scores, top_p), float("-inf"))
    return scores.numpy()


def filtered_distribution(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """The distribution sampling draws from: temperature, then top-k, then top-p, renormalised.

    This is transformers' warper order (temperature -> top-k -> top-p), in float32 as in
    `generate` (`warped_scores`); top-p is computed on the distribution that remains after top-k.
    Returned as float64 probabilities (0 for a cut token).
    """
    return softmax(warped_scores(logits, temperature, top_k, top_p))


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


def cut_counts(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> dict:
    """How many tokens each cut leaves, as `generate` counts them (finite scores after its warpers):
    `top_k` after top-k alone, `both` after top-k and then top-p (the step table's "tokens left")."""
    return {"top_k": int(np.isfinite(warped_scores(logits, temperature, top_k)).sum()),
            "both": int(np.isfinite(warped_scores(logits, temperature, top_k, top_p)).sum())}


def cut_curve(logits: np.ndarray, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
              max_points: int = 200) -> dict:
    """The curve top-p really cuts: the distribution after temperature and top-k (renormalised, as
    generate's warpers do), its running sum, and `cut_rank`: how many tokens survive both cuts
    (the step table's "tokens left"; with top_p off, all that top-k leaves)."""
    p = softmax(warped_scores(logits, temperature, top_k))
    curve = cumulative_curve(p, None, max_points)
    survivors = cut_counts(logits, temperature, top_k, top_p)["both"]
    if survivors > len(curve["ranks"]):
        curve = cumulative_curve(p, None, min(p.size, survivors + 10))
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
