"""backend/runtime/stats.py: the intervals agree with scipy's bootstrap and Welch's t, the point values with
scikit-learn, and the one rule gives the reason its numbers call for."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import accuracy_score

from backend.runtime import stats


def _scipy_percentile(data, statistic, paired=False):
    res = sps.bootstrap(data, statistic, n_resamples=20000, method="percentile", paired=paired,
                        vectorized=False, rng=np.random.default_rng(1))
    return res.confidence_interval.low, res.confidence_interval.high


def test_accuracy_interval_matches_scipy_bootstrap_and_sklearn():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 60)
    pred = np.where(rng.random(60) < 0.7, y, (y + 1) % 3)
    est = stats.accuracy(pred == y, "m", resamples=20000)
    assert est.value == pytest.approx(accuracy_score(y, pred), abs=1e-15)
    lo, hi = _scipy_percentile(((pred == y).astype(float),), np.mean)
    assert est.lo == pytest.approx(lo, abs=0.02) and est.hi == pytest.approx(hi, abs=0.02)
    assert est.lo < est.value < est.hi and est.n == 60
    assert stats.accuracy(pred == y, "m") == stats.accuracy(pred == y, "m")  # seeded: the same on every call


def test_entity_f1_interval_resamples_whole_sentences_like_scipy_paired_bootstrap():
    rng = np.random.default_rng(5)
    counts = np.stack([rng.integers(0, 4, 40), rng.integers(0, 2, 40), rng.integers(0, 2, 40)], axis=1)
    est = stats.entity_f1(counts, "de", resamples=20000)
    tp, fp, fn = counts.sum(axis=0)
    assert est.value == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-15)

    def f1(t, p, n):
        return 2 * t.sum() / (2 * t.sum() + p.sum() + n.sum())

    lo, hi = _scipy_percentile((counts[:, 0], counts[:, 1], counts[:, 2]), f1, paired=True)
    assert est.lo == pytest.approx(lo, abs=0.015) and est.hi == pytest.approx(hi, abs=0.015)


def test_timing_summary_is_the_t_interval_and_the_ratio_agrees_with_a_bootstrap():
    rng = np.random.default_rng(7)
    a, b = rng.normal(10, 1, 100), rng.normal(8, 1.5, 100)
    est = stats.timing_summary(a.mean(), a.std(ddof=1), 100)
    lo, hi = sps.t.interval(0.95, 99, loc=a.mean(), scale=sps.sem(a))
    assert est.lo == pytest.approx(lo, rel=1e-6) and est.hi == pytest.approx(hi, rel=1e-6)
    r, rlo, rhi = stats.timing_ratio_summary((a.mean(), a.std(ddof=1), 100), (b.mean(), b.std(ddof=1), 100))
    boot = sps.bootstrap((a, b), lambda x, y: np.mean(x) / np.mean(y), n_resamples=20000, method="percentile",
                         vectorized=False, rng=np.random.default_rng(2)).confidence_interval
    assert r == pytest.approx(a.mean() / b.mean())
    assert rlo == pytest.approx(boot.low, rel=0.01) and rhi == pytest.approx(boot.high, rel=0.01)
    br, blo, bhi = stats.timing_ratio(a, b, resamples=20000)
    assert br == pytest.approx(r) and blo == pytest.approx(boot.low, rel=0.01) and bhi == pytest.approx(boot.high, rel=0.01)


def test_paired_difference_cancels_the_test_sets_difficulty():
    rng = np.random.default_rng(11)
    easy = rng.random(200) < 0.8
    a, b = easy.copy(), easy.copy()
    b[:10] = ~b[:10]  # b differs from a on 10 of 200 examples
    change, lo, hi = stats.paired_difference(a.astype(float), b.astype(float))
    ichange, ilo, ihi = stats.independent_difference(a.astype(float), b.astype(float))
    assert change == pytest.approx(ichange) and (hi - lo) < (ihi - ilo) / 2


def test_the_rule_says_too_few_noisy_overlap_too_small_or_claimed():
    big = stats.Estimate("A", 0.9, 0.85, 0.95, 200)
    other = stats.Estimate("B", 0.7, 0.63, 0.77, 200)
    c = stats.claim(big, other, (0.2, 0.12, 0.28))
    assert c.claimed and c.better == "A" and c.reason == "claimed" and "+0.20" in c.why
    assert stats.claim(big, other, (0.2, -0.01, 0.4)).reason == "overlap"
    few = stats.claim(stats.Estimate("A", 1, 0, 1, 5), other, (0.3, 0.1, 0.5))
    assert few.reason == "too_few" and "only 5 examples" in few.why
    assert stats.claim(big, other, (0.02, 0.01, 0.03), min_change=0.05).reason == "too_small"
    # the timings: 1.59 +- 1.83 ms against 1.77 +- 0.97 ms, 100 calls each: noisy, whatever the ratio
    slow = stats.timing_summary(1.77, 0.97, 100, "student")
    fast = stats.timing_summary(1.59, 1.83, 100, "ONNX")
    ratio = stats.timing_ratio_summary((1.77, 0.97, 100), (1.59, 1.83, 100))
    c = stats.claim(slow, fast, ratio, ratio=True, higher_is_better=False, min_n=20, min_change=0.10)
    assert c.reason == "noisy" and "ONNX" in c.why and "1.83" in c.why
    # a clean 2x: the faster (lower time) is named
    c = stats.claim(stats.timing_summary(10, 1, 100, "teacher"), stats.timing_summary(5, 0.5, 100, "student"),
                    stats.timing_ratio_summary((10, 1, 100), (5, 0.5, 100)), ratio=True, higher_is_better=False,
                    min_n=20, min_change=0.10, better_word="faster")
    assert c.claimed and c.better == "student" and "student is faster" in c.why and "2.0" in c.why
    # 1.05x with a tight interval: outside the interval of no change, but under what two runs differ by
    c = stats.claim(stats.timing_summary(10.5, 0.1, 100, "a"), stats.timing_summary(10, 0.1, 100, "b"),
                    stats.timing_ratio_summary((10.5, 0.1, 100), (10, 0.1, 100)), ratio=True, higher_is_better=False,
                    min_n=20, min_change=0.10)
    assert c.reason == "too_small" and "1.10x" in c.why


def test_decimals_follow_the_interval():
    assert stats.decimals(1.0, 1.6) == 1 and stats.decimals(1.95, 2.05) == 2 and stats.decimals(5, 25) == 0
    assert stats.decimals(2.0, 2.0) == 3 and not math.isnan(stats.decimals(float("nan"), 1))


def test_paired_ratio_of_medians_matches_scipys_paired_bootstrap():
    rng = np.random.default_rng(13)
    base = rng.uniform(10, 20, 20)
    a, b = base * 1.7 * rng.normal(1, 0.05, 20), base
    r, lo, hi = stats.paired_ratio(a, b, resamples=20000)
    assert r == pytest.approx(np.median(a) / np.median(b))
    ci = sps.bootstrap((a, b), lambda x, y: np.median(x) / np.median(y), paired=True, n_resamples=20000,
                       method="percentile", vectorized=False, rng=np.random.default_rng(4)).confidence_interval
    assert lo == pytest.approx(ci.low, rel=0.02) and hi == pytest.approx(ci.high, rel=0.02)


def test_an_interval_that_excludes_zero_never_reads_as_reaching_it():
    a, b = stats.Estimate("A", 0.83, 0.74, 0.89, 95), stats.Estimate("B", 0.67, 0.57, 0.76, 95)
    c = stats.claim(a, b, (0.158, 0.021, 0.29))  # a Train run's: shown as "+0.0 to +0.3" at one decimal
    assert c.claimed and "95% interval +0.02 to +0.29" in c.why


def test_the_t_quantile_needs_no_scipy_at_run_time_and_agrees_with_it():
    for df in (5, 9, 19, 29, 99, 1000):
        assert stats._t(df) == pytest.approx(sps.t.ppf(0.975, df), abs=1e-3)
    assert stats._t(float("inf")) == pytest.approx(sps.norm.ppf(0.975), abs=1e-8)
    import ast
    tree = ast.parse(open(stats.__file__).read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names} | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("scipy") for m in imported)  # requirements.txt has no scipy
