"""The llama-family decoder from scratch (SmolLM2, Llama, Mistral, Qwen2).

Four changes from the book's encoder: RMSNorm instead of LayerNorm, applied *before* each
sub-layer (pre-norm: x = x + sublayer(norm(x))); no position vectors at the input, but rotary
positions that turn each query/key pair of dimensions; fewer key/value heads than query heads
(grouped-query attention); and a gated MLP (SwiGLU). A causal mask keeps each token from
looking ahead. Rotary tables (`encodings.rotary_cos_sin_for`) and the attention itself come
from backend/attention.
"""

from __future__ import annotations

from backend.anatomy.ops import (Context, UnsupportedModel, activation, attend, linear, merge_heads, rms_norm,
                                 split_heads)
from backend.engines.attention.math import apply_rotary, repeat_kv



def check(model) -> None:
    """Refuse variants this recipe does not cover (per-head q/k norms, sliding windows shorter than the text)."""
    attn = model.layers[0].self_attn
    if getattr(model.config, "model_type", "") == "smollm3":
        raise UnsupportedModel("This decoder leaves rotary positions out of some layers; the recipe does not cover it.")
    if getattr(attn, "q_norm", None) is not None:
        raise UnsupportedModel("This decoder normalises queries and keys per head; the recipe does not cover it.")


def embeddings(model, input_ids, token_type_ids=None):
    """Just a lookup: no position vectors are added (rotary positions act inside attention)."""
    return model.embed_tokens.weight.float()[input_ids]


def grouped_query_attention(attn, x, ctx: Context):
    """Q from 9 heads, K and V from 3 (SmolLM2): each K/V head serves a group of query heads.

    Queries and keys are rotated by position (rotary) before the dot product.
    """
    cfg = ctx.config
    n_heads, n_kv = cfg.num_attention_heads, getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    q = split_heads(linear(attn.q_proj, x), n_heads)
    k = split_heads(linear(attn.k_proj, x), n_kv)
    v = split_heads(linear(attn.v_proj, x), n_kv)
    q, k = apply_rotary(q, ctx.cos, ctx.sin), apply_rotary(k, ctx.cos, ctx.sin)
    k, v = repeat_kv(k, n_heads // n_kv), repeat_kv(v, n_heads // n_kv)
    out, parts = attend(q, k, v, ctx.mask)
    return linear(attn.o_proj, merge_heads(out)), parts


def attention_sublayer(layer, x, ctx: Context):
    """Pre-norm: x = x + attention(RMSNorm(x)). Returns (x, what attention added, parts)."""
    added, parts = grouped_query_attention(layer.self_attn, rms_norm(layer.input_layernorm, x), ctx)
    return x + added, added, parts


def swiglu_mlp(mlp, x, ctx: Context):
    """The gated MLP: down(silu(gate(x)) * up(x)), in place of the book's expand-GELU-project."""
    act = activation(ctx.config.hidden_act)
    return linear(mlp.down_proj, act(linear(mlp.gate_proj, x)) * linear(mlp.up_proj, x))


def mlp_sublayer(layer, x, ctx: Context):
    """Pre-norm again: x = x + MLP(RMSNorm(x)). Returns (x, what the MLP added)."""
    added = swiglu_mlp(layer.mlp, rms_norm(layer.post_attention_layernorm, x), ctx)
    return x + added, added


def decoder_layer(layer, x, ctx: Context):
    """One block: attention, then MLP, each reading a normalised copy and adding to the stream."""
    x, attn_added, parts = attention_sublayer(layer, x, ctx)
    x, mlp_added = mlp_sublayer(layer, x, ctx)
    return x, attn_added, mlp_added, parts


def final_norm(model, x):
    """Pre-norm leaves the stream unnormalised: one last RMSNorm before the LM head."""
    return rms_norm(model.norm, x)


def layers(model) -> list:
    return list(model.layers)


STEPS = (embeddings, grouped_query_attention, attention_sublayer, swiglu_mlp, mlp_sublayer, decoder_layer, final_norm)
