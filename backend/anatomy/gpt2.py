"""GPT-2 from scratch: the book's decoder (chapter 5's model).

Learned position vectors added to the token vectors, pre-norm LayerNorm blocks, one fused
projection for Q, K and V (GPT-2's Conv1D stores weights transposed), a GELU MLP, and a
final LayerNorm before the LM head. A causal mask keeps each token from looking ahead.
"""

from __future__ import annotations

import torch

from backend.anatomy.ops import (Context, UnsupportedModel, activation, attend, conv1d, layer_norm, merge_heads,
                                 split_heads)



def check(model) -> None:
    """Refuse GPT-2 variants that scale attention differently from 1/sqrt(d_k)."""
    cfg = model.config
    if not getattr(cfg, "scale_attn_weights", True) or getattr(cfg, "scale_attn_by_inverse_layer_idx", False):
        raise UnsupportedModel("This GPT-2 variant scales attention scores differently; the recipe covers 1/sqrt(d_k).")


def embeddings(model, input_ids, token_type_ids=None):
    """Token vectors plus learned position vectors (no LayerNorm here: each block norms its input)."""
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    return model.wte.weight.float()[input_ids] + model.wpe.weight.float()[positions][None]


def causal_self_attention(attn, x, ctx: Context):
    """One fused projection gives Q, K and V; split into heads, attend (masked), project out."""
    q, k, v = conv1d(attn.c_attn, x).split(ctx.config.n_embd, dim=2)
    n = ctx.config.n_head
    out, parts = attend(split_heads(q, n), split_heads(k, n), split_heads(v, n), ctx.mask)
    return conv1d(attn.c_proj, merge_heads(out)), parts


def attention_sublayer(layer, x, ctx: Context):
    """Pre-norm: x = x + attention(LayerNorm(x)). Returns (x, what attention added, parts)."""
    added, parts = causal_self_attention(layer.attn, layer_norm(layer.ln_1, x), ctx)
    return x + added, added, parts


def feed_forward(mlp, x, ctx: Context):
    """Expand 4x, GELU (tanh approximation), project back."""
    act = activation(ctx.config.activation_function)
    return conv1d(mlp.c_proj, act(conv1d(mlp.c_fc, x)))


def feed_forward_sublayer(layer, x, ctx: Context):
    """x = x + FeedForward(LayerNorm(x)). Returns (x, what the MLP added)."""
    added = feed_forward(layer.mlp, layer_norm(layer.ln_2, x), ctx)
    return x + added, added


def decoder_layer(layer, x, ctx: Context):
    """One block: attention, then feed-forward, both adding to the residual stream."""
    x, attn_added, parts = attention_sublayer(layer, x, ctx)
    x, mlp_added = feed_forward_sublayer(layer, x, ctx)
    return x, attn_added, mlp_added, parts


def final_norm(model, x):
    """ln_f: the last LayerNorm, before the LM head."""
    return layer_norm(model.ln_f, x)


def layers(model) -> list:
    return list(model.h)


STEPS = (embeddings, causal_self_attention, attention_sublayer, feed_forward, feed_forward_sublayer,
         decoder_layer, final_norm)
