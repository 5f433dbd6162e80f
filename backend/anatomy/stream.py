"""The residual stream: how big it is after each layer, how much each sub-layer adds, how far it turns.

Every layer reads the stream and adds to it (pre-norm) or adds and renormalises (post-norm).
These numbers come from the from-scratch trace, for one chosen token and averaged over tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _norms(t: torch.Tensor, real: torch.Tensor, token: int) -> tuple[float, float]:
    """(L2 norm at `token`, mean L2 norm over real tokens) of one (T, D) tensor."""
    n = t.norm(dim=-1)
    return float(n[token]), float(n[real].mean())


def residual_stream(trace, attention_mask: torch.Tensor, token: int, row: int = 0) -> dict:
    """Per hidden state (embeddings, layer 1..L) and per layer, for sequence `row` of the batch.

    norm / mean_norm: |h_l| at the token / averaged over tokens; attn_added / mlp_added: the
    size of what layer l's attention and MLP wrote (token, and mean); cosine_prev: cos(h_l, h_l-1)
    at the token (1.0 = the layer left its direction alone).
    """
    real = attention_mask[row].bool().to(trace.hidden[0].device)
    hidden = [h[row] for h in trace.hidden]
    norm, mean_norm = zip(*(_norms(h, real, token) for h in hidden))
    attn, attn_mean = zip(*(_norms(a[row], real, token) for a in trace.attn_added))
    mlp, mlp_mean = zip(*(_norms(m[row], real, token) for m in trace.mlp_added))
    cosine = [float(F.cosine_similarity(hidden[i][token], hidden[i - 1][token], dim=0)) for i in range(1, len(hidden))]
    return {
        "token_index": token,
        "norm": list(norm),
        "mean_norm": list(mean_norm),
        "attn_added": list(attn),
        "attn_added_mean": list(attn_mean),
        "mlp_added": list(mlp),
        "mlp_added_mean": list(mlp_mean),
        "cosine_prev": cosine,
    }
