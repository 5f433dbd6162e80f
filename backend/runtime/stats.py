"""Every comparison the app shows, with its uncertainty: one place that computes intervals and one rule that
says whether a difference can be claimed, and why not when it cannot.

Intervals (95%, seeded, so the same numbers give the same interval on every call):
- `accuracy(correct)`: bootstrap percentile interval of an accuracy, the test examples resampled;
- `entity_f1(counts)`: the same for entity F1, whole sentences resampled (each sentence's true positives, false
  positives and false negatives stay together, so the interval is the sentence-level one seqeval's score has);
- `timing(ms)` / `timing_summary(mean, std, n)`: a mean time per call from repeated calls;
- `paired_difference(a, b)`: two scores on the SAME examples (a variant against its baseline): one resampling of
  the examples feeds both, so the test set's difficulty cancels out;
- `independent_difference(a, b)`: two scores on different examples (German's test set against French's);
- `timing_ratio(a, b)`: how many times slower `a` is than `b`, from repeated calls: the bootstrap of the ratio of
  means when the calls' times are kept, else Welch's delta-method interval of log(mean_a / mean_b).

The rule, `claim(a, b, interval, ...)`, gives one of:
- "too_few": fewer examples (or timed calls) than `min_n`: nothing is claimed whatever the numbers;
- "noisy": a timing whose standard deviation exceeds its mean (a few calls took many times the usual one, so the
  mean is carried by them): it is not ranked;
- "overlap": the 95% interval of the difference (ratio) includes no difference (1x);
- "too_small": the interval excludes no difference but the change is under `min_change` (for timings: what two
  runs on a shared CPU differ by);
- "claimed": the better one is named, with the interval that allows it.
`why` says the reason in words, with the numbers the rule used; a page quotes it instead of writing its own.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

LEVEL = 0.95
RESAMPLES = 2000
SEED = 0
MIN_EXAMPLES = 20  # fewer examples than this: no accuracy or F1 difference is claimed
MIN_CALLS = 20  # fewer timed calls than this: no timing is ranked
SPEED_NOISE = 0.10  # two runs' ratios on a shared CPU differ by this much: a smaller speed-up is not claimed
REASONS = ("claimed", "too_few", "noisy", "overlap", "too_small")


@dataclass(frozen=True)
class Estimate:
    """A score or a time with its 95% interval; `noisy` says why it cannot be ranked (None: it can)."""
    name: str
    value: float
    lo: float
    hi: float
    n: int
    noisy: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Claim:
    """The rule's answer: `better` is the name claimed better (None: no claim), `reason` one of REASONS."""
    claimed: bool
    better: str | None
    reason: str
    why: str
    change: float
    lo: float
    hi: float

    def as_dict(self) -> dict:
        return asdict(self)


def _indices(n: int, resamples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _percentile(values: np.ndarray, level: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if not len(values):
        return float("nan"), float("nan")
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap(data, statistic: Callable[[np.ndarray], np.ndarray], resamples: int = RESAMPLES, level: float = LEVEL,
              seed: int = SEED) -> tuple[float, float]:
    """Percentile interval of `statistic` over `resamples` resamplings of `data`'s rows (axis 0).
    `statistic` is vectorised: it takes an array of shape (resamples, n, ...) and returns (resamples,)."""
    data = np.asarray(data, dtype=np.float64)
    if len(data) == 0:
        return float("nan"), float("nan")
    return _percentile(np.asarray(statistic(data[_indices(len(data), resamples, seed)]), dtype=np.float64), level)


def _mean(x: np.ndarray) -> np.ndarray:
    return x.mean(axis=-1)


def f1_of(counts: np.ndarray) -> np.ndarray:
    """Entity F1 from summed (..., 3) counts of true positives, false positives, false negatives (0 when none)."""
    counts = np.asarray(counts, dtype=np.float64)
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    denom = 2 * tp + fp + fn
    return np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)


def _f1_resampled(x: np.ndarray) -> np.ndarray:
    return f1_of(x.sum(axis=-2))


def accuracy(correct, name: str = "", **kw) -> Estimate:
    """An accuracy (the share of True in `correct`, one entry per example) with its bootstrap interval."""
    c = np.asarray(correct, dtype=np.float64)
    value = float(c.mean()) if len(c) else 0.0
    lo, hi = bootstrap(c, _mean, **kw) if len(c) else (0.0, 1.0)
    return Estimate(name, value, lo, hi, len(c))


def entity_f1(counts, name: str = "", **kw) -> Estimate:
    """Entity F1 from per-sentence [true positives, false positives, false negatives] with its bootstrap
    interval (sentences resampled)."""
    c = np.asarray(counts, dtype=np.float64).reshape(-1, 3)
    value = float(f1_of(c.sum(axis=0)))
    lo, hi = bootstrap(c, _f1_resampled, **kw) if len(c) else (0.0, 1.0)
    return Estimate(name, value, lo, hi, len(c))


def _noisy(mean: float, std: float) -> str | None:
    if mean > 0 and std > mean:
        return (f"its calls vary more than they take (standard deviation {std:.2f} ms over a mean of {mean:.2f} ms: "
                "a few calls took many times the usual one, so the mean is carried by them)")
    return None


def timing(ms, name: str = "", **kw) -> Estimate:
    """The mean time per call (ms) of repeated calls with the bootstrap interval of that mean."""
    x = np.asarray(ms, dtype=np.float64)
    mean = float(x.mean()) if len(x) else float("nan")
    std = float(x.std(ddof=1)) if len(x) > 1 else 0.0
    lo, hi = bootstrap(x, _mean, **kw) if len(x) > 1 else (mean, mean)
    return Estimate(name, mean, lo, hi, len(x), _noisy(mean, std))


def _t(df: float, level: float = LEVEL) -> float:
    """Student's t quantile for `level` two-sided, by the Cornish-Fisher expansion around the normal one (no scipy
    at run time: a Space installs requirements.txt only); within 1e-3 of scipy's from 5 degrees of freedom."""
    z = _z(0.5 + level / 2)
    if not (df > 0 and math.isfinite(df)):
        return z
    g = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
         (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
         (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    return z + sum(gi / df ** (i + 1) for i, gi in enumerate(g))


def _z(p: float) -> float:
    """The standard normal quantile (Acklam's rational approximation, relative error under 1.2e-9)."""
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
         -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
         -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
         4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    if p < 0.02425 or p > 1 - 0.02425:
        q = math.sqrt(-2 * math.log(p if p < 0.5 else 1 - p))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        return x if p < 0.5 else -x
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def timing_summary(mean: float, std: float, n: int, name: str = "", level: float = LEVEL) -> Estimate:
    """The same from a mean, a standard deviation and a count (when the calls' times were not kept): the t interval."""
    if n < 2:
        return Estimate(name, mean, mean, mean, n, _noisy(mean, std or 0.0))
    half = _t(n - 1, level) * std / math.sqrt(n)
    return Estimate(name, mean, mean - half, mean + half, n, _noisy(mean, std))


def paired_difference(a, b, statistic: Callable[[np.ndarray], np.ndarray] = _mean, **kw) -> tuple[float, float, float]:
    """(a - b, lo, hi) for two scores on the same examples: rows of `a` and `b` are resampled together."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) != len(b):
        raise ValueError("a paired difference needs the same examples on both sides")
    idx = _indices(len(a), kw.get("resamples", RESAMPLES), kw.get("seed", SEED))
    change = float(statistic(a[None])[0] - statistic(b[None])[0])
    return (change, *_percentile(statistic(a[idx]) - statistic(b[idx]), kw.get("level", LEVEL)))


def independent_difference(a, b, statistic: Callable[[np.ndarray], np.ndarray] = _mean,
                           **kw) -> tuple[float, float, float]:
    """(a - b, lo, hi) for two scores on different examples: each side resampled on its own (seeds apart)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    resamples, seed = kw.get("resamples", RESAMPLES), kw.get("seed", SEED)
    da = statistic(a[_indices(len(a), resamples, seed)])
    db = statistic(b[_indices(len(b), resamples, seed + 1)])
    change = float(statistic(a[None])[0] - statistic(b[None])[0])
    return (change, *_percentile(da - db, kw.get("level", LEVEL)))


def f1_difference(a_counts, b_counts, paired: bool, **kw) -> tuple[float, float, float]:
    """(F1 a - F1 b, lo, hi) from per-sentence counts; `paired` when both are on the same sentences."""
    a = np.asarray(a_counts, dtype=np.float64).reshape(-1, 3)
    b = np.asarray(b_counts, dtype=np.float64).reshape(-1, 3)
    return (paired_difference if paired else independent_difference)(a, b, _f1_resampled, **kw)


def timing_ratio(a_ms, b_ms, **kw) -> tuple[float, float, float]:
    """(mean a / mean b, lo, hi) from the calls' times: each side resampled on its own."""
    a, b = np.asarray(a_ms, dtype=np.float64), np.asarray(b_ms, dtype=np.float64)
    resamples, seed = kw.get("resamples", RESAMPLES), kw.get("seed", SEED)
    ra = a[_indices(len(a), resamples, seed)].mean(axis=1)
    rb = b[_indices(len(b), resamples, seed + 1)].mean(axis=1)
    return (float(a.mean() / b.mean()), *_percentile(ra / rb, kw.get("level", LEVEL)))


def paired_ratio(a, b, center: Callable[[np.ndarray], np.ndarray] | None = None,
                 **kw) -> tuple[float, float, float]:
    """(center(a) / center(b), lo, hi) for two measurements taken in pairs (the same prompt, the same round):
    the pairs are resampled together; `center` is the median unless given (vectorised over the last axis)."""
    center = center or (lambda x: np.median(x, axis=-1))
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) != len(b) or not len(a):
        raise ValueError("a paired ratio needs the same number of measurements on both sides")
    idx = _indices(len(a), kw.get("resamples", RESAMPLES), kw.get("seed", SEED))
    return (float(center(a) / center(b)), *_percentile(center(a[idx]) / center(b[idx]), kw.get("level", LEVEL)))


def timing_ratio_summary(a: tuple[float, float, int], b: tuple[float, float, int],
                         level: float = LEVEL) -> tuple[float, float, float]:
    """(mean a / mean b, lo, hi) from (mean, std, n) of each: log(mean_a / mean_b) +- t * se, where se is the
    delta method's sqrt(sa^2 / (na ma^2) + sb^2 / (nb mb^2)) and t has Welch-Satterthwaite's degrees of freedom."""
    (ma, sa, na), (mb, sb, nb) = a, b
    ratio = ma / mb
    if na < 2 or nb < 2 or ma <= 0 or mb <= 0:
        return ratio, ratio, ratio
    va, vb = (sa / ma) ** 2 / na, (sb / mb) ** 2 / nb
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1)) if va + vb > 0 else float("inf")
    half = _t(df, level) * se
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)


def decimals(lo: float, hi: float, most: int = 3) -> int:
    """Decimals an estimate with this interval supports: the half-width's first significant digit, no finer."""
    half = abs(hi - lo) / 2 * (1 + 1e-9)  # 0.0999999 (a rounded interval) is 0.1
    if not math.isfinite(half) or half <= 0:
        return most
    return int(min(most, max(0, -math.floor(math.log10(half)))))


def _fmt(x: float, d: int, ratio: bool) -> str:
    return f"{x:.{d}f}x" if ratio else f"{x:+.{d}f}"


def claim(a: Estimate, b: Estimate, interval: tuple[float, float, float], *, ratio: bool = False,
          higher_is_better: bool = True, min_n: int = MIN_EXAMPLES, min_change: float = 0.0,
          what: str = "difference", units: str = "examples", better_word: str = "better") -> Claim:
    """May `a` or `b` be called better? `interval` is (change, lo, hi) of a against b: a - b, or a / b when
    `ratio` (then no difference is 1 and `min_change` is relative: 0.10 asks for 1.10x). For times
    (`higher_is_better=False`) the smaller is better. The reason is the first rule that holds: too_few, noisy,
    overlap, too_small, claimed."""
    change, lo, hi = interval
    null = 1.0 if ratio else 0.0
    d = decimals(lo, hi)
    while d < 4 and (lo > null or hi < null) and null in (round(lo, d), round(hi, d)):
        d += 1  # an interval that excludes no change never reads as reaching it ("+0.0 to +0.3")
    said = (f"{_fmt(change, d, ratio)} (95% interval {_fmt(lo, d, ratio)} to {_fmt(hi, d, ratio)})")
    out = dict(change=float(change), lo=float(lo), hi=float(hi))
    few = min(a.n, b.n)
    if few < min_n:
        return Claim(False, None, "too_few", f"only {few} {units} on one side "
                     f"(fewer than {min_n}): too few to compare", **out)
    for e in (a, b):
        if e.noisy:
            return Claim(False, None, "noisy", f"{e.name} is timed too noisily to rank: {e.noisy}", **out)
    if not (lo > null or hi < null):
        return Claim(False, None, "overlap", f"the {what}, {said}, includes {_fmt(null, 0, ratio) if ratio else 'zero'}:"
                     " the intervals overlap, so this run cannot tell them apart", **out)
    a_up = lo > null
    size = abs(math.log(change)) if ratio else abs(change)
    need = math.log1p(min_change) if ratio else min_change
    if size < need:
        limit = f"{1 + min_change:.2f}x" if ratio else f"{min_change:g}"
        return Claim(False, None, "too_small", f"the {what}, {said}, is under the {limit} that two runs differ by on "
                     "their own: a change too small to claim", **out)
    better = a if a_up == higher_is_better else b
    return Claim(True, better.name, "claimed", f"{better.name} is {better_word}: the {what} is {said}", **out)
