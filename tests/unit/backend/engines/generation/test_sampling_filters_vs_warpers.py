"""The reference sampling filters (`filters`) against what `generate` runs: transformers'
TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper, in float32.

The cases of transformers' own tests/generation/test_logits_process.py (test_top_k_dist_warper,
test_top_p_dist_warper) first, then random distributions full of exact ties and near-ties
(neighbours one float32 step apart), where the masks must be the warpers' token for token.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from backend.engines.generation import filters as F


def warpers(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """The scores generate's sampling warpers leave, in generate's order (float32, -inf = cut)."""
    scores = torch.tensor(np.asarray(logits, dtype=np.float32))[None]
    if temperature != 1.0:
        scores = TemperatureLogitsWarper(temperature)(None, scores)
    if top_k:
        scores = TopKLogitsWarper(top_k)(None, scores)
    if top_p < 1.0:
        scores = TopPLogitsWarper(top_p)(None, scores)
    return scores[0].numpy()


# ------------------------------------------------------------ transformers' own test cases

def test_transformers_top_k_case_ramp():
    ramp = np.tile(np.arange(10, dtype=np.float32), (2, 1))
    ramp[1, :5] += 10
    assert np.isinf(F.warped_scores(ramp[0], top_k=3)).tolist() == 7 * [True] + 3 * [False]
    assert np.isinf(F.warped_scores(ramp[1], top_k=3)).tolist() == 2 * [True] + 3 * [False] + 5 * [True]
    probs = F.softmax(ramp[1])
    assert F.top_k_mask(probs, 3).tolist() == (~np.isinf(warpers(ramp[1], top_k=3))).tolist()


def test_transformers_top_k_case_uniform_keeps_every_tie():
    uniform = np.full(5, 1 / 5)
    assert F.top_k_mask(uniform, 1).all()  # every token ties with the first: all survive
    assert np.isfinite(F.warped_scores(np.log(uniform), top_k=1)).all()


@pytest.mark.parametrize("row,expected", [([0.3, 0.1, 0.1, 0.5], [0.3, 0.0, 0.0, 0.5]),
                                          ([0.15, 0.3, 0.3, 0.25], [0.0, 0.3, 0.3, 0.25])])
def test_transformers_top_p_case_exact_boundary(row, expected):
    """At top_p 0.8 the first row's tail 0.1 + 0.1 is exactly 1 - 0.8 in float32: two tokens go."""
    dist = np.log(np.array(row, dtype=np.float32))
    np.testing.assert_allclose(np.exp(F.warped_scores(dist, top_p=0.8)), expected, atol=1e-3)
    assert F.top_p_mask(np.array(row), 0.8).tolist() == [e > 0 for e in expected]
    assert F.cut_counts(dist, top_p=0.8)["both"] == sum(e > 0 for e in expected)


def test_transformers_top_p_case_extreme_ramp():
    ramp = np.tile(np.arange(10, dtype=np.float32), (2, 1)) - 5
    ramp[1] *= 100.0
    for row in ramp:
        assert np.array_equal(np.isfinite(F.warped_scores(row, top_p=0.9)), np.isfinite(warpers(row, top_p=0.9)))
    assert np.isfinite(F.warped_scores(ramp[1], top_p=0.9)).sum() == 1


# ------------------------------------------------------------ random distributions, ties and near-ties

def tied_logits(rng: np.random.Generator, size: int) -> np.ndarray:
    """Logits with exact ties (few distinct values) and near-ties (one float32 step apart)."""
    base = rng.choice(rng.normal(0, 2, size=max(2, size // 4)).astype(np.float32), size=size)
    near = rng.random(size) < 0.3
    base[near] = np.nextafter(base[near], np.float32(np.inf))
    return base.astype(np.float32)


SETTINGS = [(1.0, 0, 0.5), (1.0, 0, 0.8), (1.0, 0, 0.95), (0.7, 0, 0.9), (1.0, 3, 1.0), (1.0, 10, 1.0),
            (1.3, 5, 0.9), (0.5, 20, 0.7), (1.0, 50, 1.0), (2.0, 7, 0.99)]


@pytest.mark.parametrize("temperature,top_k,top_p", SETTINGS)
def test_random_tied_distributions_are_cut_as_generate_cuts_them(temperature, top_k, top_p):
    rng = np.random.default_rng(int(temperature * 100) + top_k * 7 + int(top_p * 1000))
    for _ in range(60):
        logits = tied_logits(rng, int(rng.integers(4, 200)))
        theirs = warpers(logits, temperature, top_k, top_p)
        ours = F.warped_scores(logits, temperature, top_k, top_p)
        assert np.array_equal(np.isfinite(ours), np.isfinite(theirs))
        np.testing.assert_array_equal(ours[np.isfinite(ours)], theirs[np.isfinite(theirs)])
        counts = F.cut_counts(logits, temperature, top_k, top_p)
        assert counts["both"] == int(np.isfinite(theirs).sum())
        assert counts["top_k"] == int(np.isfinite(warpers(logits, temperature, top_k)).sum())
        curve = F.cut_curve(logits, temperature, top_p, top_k)
        assert curve["cut_rank"] == counts["both"]  # the curve's cut is the table's "tokens left"


def test_masks_on_probabilities_follow_the_warpers_on_the_same_distribution():
    """top_k_mask / top_p_mask take probabilities: the same tokens as the warpers on log p."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = F.softmax(tied_logits(rng, int(rng.integers(4, 60))))
        logp = np.log(p.astype(np.float32))
        for k in (1, 2, 5):
            assert F.top_k_mask(p, k).tolist() == np.isfinite(warpers(logp, top_k=k)).tolist()
        for top_p in (0.3, 0.6, 0.9):
            assert F.top_p_mask(p, top_p).tolist() == np.isfinite(warpers(logp, top_p=top_p)).tolist()


def test_top_k_never_keeps_a_zero_probability_token():
    probs = np.array([0.5, 0.5, 0.0, 0.0, 0.0])
    assert F.top_k_mask(probs, 3).tolist() == [True, True, False, False, False]
    logits = np.array([0.0, 0.0, -np.inf, -np.inf, -np.inf], dtype=np.float32)
    assert F.cut_counts(logits, top_k=3)["top_k"] == 2 == int(np.isfinite(warpers(logits, top_k=3)).sum())


def test_top_k_alone_counts_what_top_k_leaves_when_top_p_is_off():
    """With top_p = 1 and top_k = 50, both counts are 50 (the issue: the whole vocabulary)."""
    logits = np.random.default_rng(0).normal(size=1000).astype(np.float32)
    counts = F.cut_counts(logits, 1.0, 50, 1.0)
    assert counts == {"top_k": 50, "both": 50}
    assert F.cut_curve(logits, 1.0, 1.0, 50)["cut_rank"] == 50
