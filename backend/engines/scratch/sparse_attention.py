"""Sparse and linear attention written out by hand (the book's chapter 11), for a learner to read.

Full attention scores every query against every key: T x T numbers per head, so its time and
memory grow with the square of the text's length. The chapter's two ways out:

* **sparse attention** scores only some (query, key) pairs, chosen by a fixed pattern:
  - a *sliding window* (Longformer, Mistral): each token sees the `window` tokens on each side
    (on a decoder, the `window` before it and itself);
  - *block-sparse* (BigBird): the text cut into blocks; each query block sees its own block and
    its neighbours, a few *global* tokens see and are seen by every token, and each query block
    also sees `random_blocks` blocks drawn at random;
* **linear attention** (Katharopoulos et al. 2020) replaces exp(q . k) by phi(q) . phi(k) with
  phi(x) = elu(x) + 1 > 0, so the sum over keys factors: out_i = phi(q_i) S / phi(q_i) z with
  S = sum_j phi(k_j) v_j^T (d x d) and z = sum_j phi(k_j): no T x T matrix at all (a running sum
  on a decoder).

Each function takes one head's q, k, v as (T, d) float tensors (or (..., T, d)) and returns the
output (T, d) and the weights it implies (T, T), the weights only to draw them. Tests check each
against a direct computation (torch's scaled_dot_product_attention with the same mask).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def causal_mask(t: int) -> torch.Tensor:
    """Bool (T, T): key j is visible to query i when j <= i."""
    return torch.ones(t, t, dtype=torch.bool).tril()


def full_mask(t: int, causal: bool) -> torch.Tensor:
    return causal_mask(t) if causal else torch.ones(t, t, dtype=torch.bool)


def sliding_window_mask(t: int, window: int, causal: bool) -> torch.Tensor:
    """Bool (T, T): |i - j| <= window (and j <= i on a decoder)."""
    i = torch.arange(t)[:, None]
    j = torch.arange(t)[None, :]
    band = (i - j).abs() <= window
    return band & causal_mask(t) if causal else band


def block_sparse_mask(t: int, block: int, global_tokens: int, random_blocks: int, seed: int,
                      causal: bool) -> torch.Tensor:
    """Bool (T, T), BigBird's pattern: each query block sees its own block and the blocks on either
    side, `random_blocks` other blocks drawn with `seed`; the first `global_tokens` tokens see every
    token and every token sees them (then the causal mask on a decoder)."""
    n_blocks = math.ceil(t / block)
    blocks = torch.zeros(n_blocks, n_blocks, dtype=torch.bool)
    for b in range(n_blocks):
        blocks[b, max(0, b - 1): b + 2] = True
    gen = torch.Generator().manual_seed(seed)
    for b in range(n_blocks):
        others = [c for c in range(n_blocks) if not blocks[b, c] and (not causal or c < b)]
        if others and random_blocks > 0:
            pick = torch.randperm(len(others), generator=gen)[:random_blocks]
            blocks[b, [others[int(p)] for p in pick]] = True
    mask = blocks.repeat_interleave(block, 0).repeat_interleave(block, 1)[:t, :t].clone()
    g = min(global_tokens, t)
    mask[:g, :] = True
    mask[:, :g] = True
    return mask & causal_mask(t) if causal else mask


def masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax attention over the visible keys only: softmax(q k^T / sqrt(d), masked) v (no mask:
    every key). A sparse kernel computes only the visible scores; here they are computed and the
    rest set to -inf, which gives the same numbers (the cost is counted by `scored_pairs`)."""
    scaled = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is None:
        weights = torch.softmax(scaled, dim=-1)
        return weights @ v, weights
    weights = torch.softmax(scaled.masked_fill(~mask, float("-inf")), dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # a query with no visible key (never, with the diagonal)
    return weights @ v, weights


def feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1: positive, so phi(q) . phi(k) can stand in for exp(q . k)."""
    return F.elu(x) + 1


def linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                     scale: bool = True) -> torch.Tensor:
    """Kernelised attention in O(T d^2): no T x T matrix. `scale` divides q and k by d^(1/4) first
    (so phi sees the same q . k / sqrt(d) range softmax does)."""
    if scale:
        s = q.size(-1) ** 0.25
        q, k = q / s, k / s
    fq, fk = feature_map(q), feature_map(k)
    if causal:  # running sums over the keys seen so far: (T, d, d) and (T, d)
        kv = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        z = torch.cumsum(fk, dim=-2)
        num = (fq.unsqueeze(-2) @ kv).squeeze(-2)
    else:
        kv = fk.transpose(-2, -1) @ v  # (d, d_v): the whole text summed once
        z = fk.sum(dim=-2, keepdim=True)
        num = fq @ kv
    den = (fq * z).sum(dim=-1, keepdim=True)
    return num / den


def linear_attention_chunked(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, chunk: int = 64,
                             scale: bool = True) -> torch.Tensor:
    """Causal linear attention chunk by chunk, as fast kernels compute it: inside a chunk the
    (chunk x chunk) products phi(q) . phi(k) with the causal mask; across chunks a running d x d sum
    S and a d-vector z carried forward. Work O(T (chunk + d) d), memory O(T d + d^2): no T x d x d
    running sums as `linear_attention(causal=True)` keeps. Same numbers."""
    if scale:
        s = q.size(-1) ** 0.25
        q, k = q / s, k / s
    fq, fk = feature_map(q), feature_map(k)
    t = q.size(-2)
    state = fk.new_zeros(*fk.shape[:-2], fk.size(-1), v.size(-1))
    z = fk.new_zeros(*fk.shape[:-2], 1, fk.size(-1))
    out = torch.empty(*q.shape[:-1], v.size(-1), dtype=v.dtype)
    for start in range(0, t, chunk):
        end = min(t, start + chunk)
        qc, kc, vc = fq[..., start:end, :], fk[..., start:end, :], v[..., start:end, :]
        inner = (qc @ kc.transpose(-2, -1)) * causal_mask(end - start).to(qc.dtype)
        num = inner @ vc + qc @ state
        den = inner.sum(-1, keepdim=True) + (qc * z).sum(-1, keepdim=True)
        out[..., start:end, :] = num / den
        state = state + kc.transpose(-2, -1) @ vc
        z = z + kc.sum(-2, keepdim=True)
    return out


def linear_weights(q: torch.Tensor, k: torch.Tensor, causal: bool, scale: bool = True) -> torch.Tensor:
    """The (T, T) weights linear attention implies (phi(q_i) . phi(k_j), rows summed to 1): built
    only to draw them; `linear_attention` never forms this matrix."""
    if scale:
        s = q.size(-1) ** 0.25
        q, k = q / s, k / s
    a = feature_map(q) @ feature_map(k).transpose(-2, -1)
    if causal:
        a = a * causal_mask(q.size(-2)).to(a.dtype)
    return a / a.sum(dim=-1, keepdim=True)


def scored_pairs(mask: torch.Tensor) -> int:
    """How many (query, key) scores a sparse kernel would compute: the mask's True entries."""
    return int(mask.sum())


def relative_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """||approx - exact|| / ||exact|| (Frobenius norms over the whole head output)."""
    den = float(exact.norm())
    return float((approx - exact).norm()) / den if den > 0 else 0.0
