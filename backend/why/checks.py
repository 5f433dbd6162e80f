"""'Is it true?': the checks computed on this input, beside the scores.

- completeness (integrated gradients): the scores should sum to f(input) - f(baseline);
- deletion: remove tokens in each method's order (most important first) and follow the
  explained quantity; compare with the mean of several random orders. The area between the
  random curve and the method's curve (per token removed, on the fraction-removed axis) is the
  method's faithfulness on this input: larger = its top tokens matter more to the model;
- agreement: Spearman rank correlation and top-k overlap between every two methods.
"""

from __future__ import annotations

import numpy as np

from backend.why.targets import Target

MAX_POINTS = 12  # deletion points per order beyond the first few (long inputs remove in strides)
FIRST_STEPS = 4  # the first removals are always single tokens (the top tokens matter most)
RANDOM_ORDERS = 6
TOP_K = 3

MEANINGS = {
    "completeness": ("Integrated gradients promise that the scores add up to the change in the output from "
                     "the all-[PAD] baseline to this text; the gap says how far the numeric integral is from "
                     "keeping that promise here."),
    "deletion": ("Removing a method's most important tokens first should lower the output faster than removing "
                 "tokens in random order; the area between the two curves is that method's faithfulness on this "
                 "input, and the method with the largest area is ranked first."),
    "agreement": ("Rank correlation (Spearman) and top-3 overlap say whether two methods order the tokens the "
                  "same way; methods that disagree cannot all be right about this prediction."),
}


def removal_counts(n: int, max_points: int = MAX_POINTS, first: int = FIRST_STEPS) -> list[int]:
    """How many tokens are removed at each point of a deletion curve: 0, 1, 2, ... then strides to n."""
    if n <= max_points:
        return list(range(n + 1))
    head = list(range(min(first, n) + 1))
    tail = np.linspace(head[-1], n, max_points - len(head) + 2).round().astype(int).tolist()
    return sorted(set(head) | set(tail))


def _keep_rows(order: np.ndarray, counts: list[int], n: int) -> np.ndarray:
    rows = np.ones((len(counts), n), dtype=bool)
    for r, k in enumerate(counts):
        rows[r, order[:k]] = False
    return rows


def ranking(scores: np.ndarray) -> np.ndarray:
    """Token indices, most important first (ties broken by position, so the order is stable)."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def deletion(target: Target, method_scores: dict[str, np.ndarray], random_orders: int = RANDOM_ORDERS,
             seed: int = 0, check=None, known: tuple[float, np.ndarray] | None = None) -> dict:
    """Deletion curves for each method and for the mean of `random_orders` random orders.
    `known`: (f(text), f(text without token i) for each i), occlusion's own forwards: the rows that
    remove nothing or one token are read from it instead of being computed again."""
    n = len(target.positions)
    counts = removal_counts(n)
    rng = np.random.default_rng(seed)
    orders = {name: ranking(s) for name, s in method_scores.items()}
    randoms = [rng.permutation(n) for _ in range(random_orders)]
    rows = np.concatenate([_keep_rows(o, counts, n) for o in list(orders.values()) + randoms])
    unique, back = np.unique(rows, axis=0, return_inverse=True)  # every order starts and ends on the same input
    values = _row_values(target, unique, check, known)[back.reshape(-1)].reshape(-1, len(counts))
    curves = dict(zip(orders, values[:len(orders)]))
    random_mean = values[len(orders):].mean(0)
    x = np.asarray(counts, dtype=np.float64) / max(n, 1)
    area = {name: float(_trapezoid(random_mean - c, x)) for name, c in curves.items()}
    k = min(TOP_K, n)
    at_k = counts.index(k)
    top_drop = {name: float(c[0] - c[at_k]) for name, c in curves.items()}
    random_drop = float(random_mean[0] - random_mean[at_k])
    return {"removed": counts, "fraction_removed": x.round(6).tolist(),
            "curves": {name: c.round(6).tolist() for name, c in curves.items()},
            "random_mean": random_mean.round(6).tolist(), "random_orders": random_orders,
            "area_over_random": {k_: round(v, 6) for k_, v in area.items()},
            "ranking": sorted(area, key=lambda m: -area[m]),
            "top_k": k, "top_k_drop": {k_: round(v, 6) for k_, v in top_drop.items()},
            "random_top_k_drop": round(random_drop, 6)}


def _row_values(target: Target, rows: np.ndarray, check, known) -> np.ndarray:
    if known is None:
        return target.scores_without(rows, check=check)
    full, without = known
    removed = (~rows).sum(1)
    out = np.empty(len(rows), dtype=np.float64)
    out[removed == 0] = full
    single = removed == 1
    out[single] = np.asarray(without, dtype=np.float64)[np.argmin(rows[single], axis=1)]
    rest = removed > 1
    if rest.any():
        out[rest] = target.scores_without(rows[rest], check=check)
    return out


def _trapezoid(y: np.ndarray, x: np.ndarray) -> float:
    if len(x) < 2:
        return 0.0
    return float(np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2.0)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties sharing their mean rank (as scipy.stats.rankdata's 'average')."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    sorted_v = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rank correlation (Pearson on average ranks); None when one side is constant."""
    if len(a) < 2:
        return None
    ra, rb = _average_ranks(a), _average_ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = float(np.sqrt((ra ** 2).sum() * (rb ** 2).sum()))
    return None if denom == 0 else float((ra * rb).sum() / denom)


def top_k_overlap(a: np.ndarray, b: np.ndarray, k: int = TOP_K) -> float:
    k = min(k, len(a))
    if k == 0:
        return 0.0
    return len(set(ranking(a)[:k].tolist()) & set(ranking(b)[:k].tolist())) / k


def agreement(method_scores: dict[str, np.ndarray], k: int = TOP_K) -> dict:
    names = list(method_scores)
    rho = [[spearman(method_scores[a], method_scores[b]) for b in names] for a in names]
    overlap = [[top_k_overlap(method_scores[a], method_scores[b], k) for b in names] for a in names]
    return {"methods": names, "spearman": [[None if v is None else round(v, 4) for v in row] for row in rho],
            "top_k": min(k, len(next(iter(method_scores.values()), []))),
            "top_k_overlap": [[round(v, 4) for v in row] for row in overlap]}


def completeness_ok(info: dict, tolerance: float = 0.05) -> bool | None:
    rel = info.get("relative_gap")
    return None if rel is None else bool(rel < tolerance)
