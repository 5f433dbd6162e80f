"""Sparse and linear attention by hand (backend/engines/scratch/sparse_attention.py, backend/scratch/attention_cost.py) against
direct computations: torch's scaled_dot_product_attention with the same mask, and linear attention's
formula summed key by key."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from backend.engines.scratch import sparse_attention as sa
from backend.scratch import attention_cost as cost


def qkv(t=37, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(t, d, generator=g, dtype=torch.float64) for _ in range(3))


def sdpa(q, k, v, mask):
    return F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]


@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_is_full_attention_with_a_band_mask(causal):
    q, k, v = qkv()
    mask = sa.sliding_window_mask(37, 5, causal)
    assert bool(mask[10, 15]) is not causal and not mask[10, 16] and mask[10, 5] and not mask[10, 4]
    out, weights = sa.masked_attention(q, k, v, mask)
    assert torch.allclose(out, sdpa(q, k, v, mask), atol=1e-10)
    assert torch.allclose(weights.sum(-1), torch.ones(37, dtype=torch.float64))
    assert float(weights[~mask].abs().max()) == 0.0


@pytest.mark.parametrize("causal", [False, True])
def test_blocked_sliding_window_gives_the_masked_numbers(causal):
    q, k, v = qkv(t=50)
    for window in (1, 4, 7, 60):
        blocked = cost.sliding_window_blocked(q, k, v, window, causal)
        masked, _ = sa.masked_attention(q, k, v, sa.sliding_window_mask(50, window, causal))
        assert torch.allclose(blocked, masked, atol=1e-10), window


def test_a_window_as_long_as_the_text_is_full_attention():
    q, k, v = qkv()
    full = F.scaled_dot_product_attention(q[None], k[None], v[None])[0]
    out, _ = sa.masked_attention(q, k, v, sa.sliding_window_mask(37, 37, False))
    assert torch.allclose(out, full, atol=1e-10)
    causal = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0]
    assert torch.allclose(sa.masked_attention(q, k, v, sa.full_mask(37, True))[0], causal, atol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
def test_block_sparse_is_bigbirds_pattern_and_sdpa_agrees(causal):
    t, block = 40, 8
    mask = sa.block_sparse_mask(t, block, global_tokens=2, random_blocks=1, seed=3, causal=causal)
    assert mask[:, :2].all() if not causal else mask[2:, :2].all()  # every token sees the global tokens
    if not causal:
        assert mask[:2, :].all()  # and they see every token
    for b in range(t // block):  # own block and the neighbours
        rows = slice(b * block, (b + 1) * block)
        assert (mask[rows, b * block:(b + 1) * block] | ~sa.full_mask(t, causal)[rows, b * block:(b + 1) * block]).all()
    q, k, v = qkv(t=t)
    assert torch.allclose(sa.masked_attention(q, k, v, mask)[0], sdpa(q, k, v, mask), atol=1e-10)
    again = sa.block_sparse_mask(t, block, 2, 1, 3, causal)
    assert torch.equal(mask, again)  # the random blocks come from the seed
    sparser = sa.block_sparse_mask(t, block, 0, 0, 3, causal)
    assert sa.scored_pairs(sparser) < sa.scored_pairs(mask) < t * t


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_equals_its_formula_summed_key_by_key(causal):
    q, k, v = qkv(t=12, d=4)
    out = sa.linear_attention(q, k, v, causal)
    s = 4 ** 0.25
    phi = lambda x: torch.where(x > 0, x + 1, torch.exp(x))  # elu(x) + 1 written out
    for i in range(12):
        keys = range(i + 1) if causal else range(12)
        w = torch.stack([phi(q[i] / s) @ phi(k[j] / s) for j in keys])
        expect = (w[:, None] * v[list(keys)]).sum(0) / w.sum()
        assert torch.allclose(out[i], expect, atol=1e-10)
    weights = sa.linear_weights(q, k, causal)
    assert torch.allclose(weights @ v, out, atol=1e-10)  # the weights drawn are the ones it implies


def test_relative_error_is_zero_for_the_same_output_and_grows_with_the_change():
    _, _, v = qkv()
    assert sa.relative_error(v, v) == 0.0
    assert sa.relative_error(v * 1.1, v) == pytest.approx(0.1)


def test_the_quadratic_fit_recovers_a_known_coefficient():
    t = np.array([64, 128, 256, 512, 1024, 2048, 4096], dtype=float)
    rng = np.random.default_rng(0)
    y = (2e-4 + 3e-7 * t + 5e-9 * t * t) * (1 + 0.01 * rng.standard_normal(len(t)))
    fit = cost.fit_quadratic(t, y)
    assert fit["c"] == pytest.approx(5e-9, rel=0.03)
    assert fit["r2"] > 0.999 and fit["quadratic_share_at_longest"] > 0.9
    assert fit["loglog_slope_last"] == pytest.approx(math.log(y[-1] / y[-2]) / math.log(2))
    linear = cost.fit_quadratic(t, 1e-3 + 2e-6 * t)
    assert abs(linear["c"]) < 1e-15 and linear["loglog_slope_last"] < 1.05


def test_measure_lengths_times_each_method_at_each_length():
    calls = []
    rows = cost.measure_lengths([64, 128], heads=2, head_dim=8, window=16, repeats=1, check=calls.append)
    assert [(r["tokens"], r["method"]) for r in rows] == [(t, m) for t in (64, 128) for m in cost.METHODS]
    assert all(r["seconds"] > 0 for r in rows) and len(calls) == len(rows)
    assert rows[-1]["weights_mb"] == pytest.approx(2 * 128 * 128 * 4 / 1e6, abs=0.01)


def test_the_quadratic_fit_keeps_every_term_non_negative():
    t = np.array([64, 128, 256, 512, 1024], dtype=float)
    y = 1e-7 * t * t - 1e-6 * t + 1e-2  # a negative linear term would fit better; a time has none
    fit = cost.fit_quadratic(t, y)
    assert min(fit["a"], fit["b"], fit["c"]) >= 0 and 0 < fit["quadratic_share_at_longest"] <= 1


def test_peak_memory_sees_the_t_by_t_matrix_that_full_attention_holds():
    q = k = v = torch.randn(1, 4, 1024, 16)
    _, full = cost.peak_bytes(lambda: sa.masked_attention(q, k, v, sa.full_mask(1024, False)))
    _, fused = cost.peak_bytes(lambda: F.scaled_dot_product_attention(q, k, v))
    if full is None:
        pytest.skip("no /proc/self/status here")
    weights = 4 * 1024 * 1024 * 4
    assert full >= weights and fused < weights / 4


def test_full_attention_without_a_mask_is_sdpas():
    q, k, v = qkv()
    out, weights = sa.masked_attention(q, k, v, None)
    assert torch.allclose(out, F.scaled_dot_product_attention(q[None], k[None], v[None])[0], atol=1e-10)
    assert torch.allclose(out, sa.masked_attention(q, k, v, sa.full_mask(37, False))[0], atol=1e-12)


def test_chunked_causal_linear_attention_gives_the_running_sums_numbers():
    q, k, v = qkv(t=50, d=6)
    for chunk in (1, 7, 16, 64):
        assert torch.allclose(sa.linear_attention_chunked(q, k, v, chunk), sa.linear_attention(q, k, v, True),
                              atol=1e-10), chunk
