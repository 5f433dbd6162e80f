"""Scaled dot-product attention computed by hand from a real model's weights.

The book (chapter 3) writes `scaled_dot_product_attention` from scratch; here we feed it the
actual inputs and weights of one layer of a loaded model (BERT-like encoders, llama-like
decoders with rotary embeddings and grouped key/value heads, GPT-2) and compare the result
with the attention weights the model itself returns. Everything is done in float32 so the
comparison means something on bf16/fp16 GPUs too.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from backend.engines.attention import families
from backend.engines.attention import encodings
from backend.runtime.errors import InputError, LabError

# Attention recipes by architecture family (backend.engines.attention.families: the one place that names them).
FAMILIES: dict[str, tuple[str, ...]] = {f.name: f.model_types for f in families.FAMILIES}


class UnsupportedModel(LabError):
    """The from-scratch attention does not know this architecture."""


def architecture(model) -> str:
    """Which attention recipe applies to `model` (a family name: bert, llama, gpt2)."""
    family = families.family_of(model)
    if family is None:
        raise UnsupportedModel(
            f"The step-by-step attention supports BERT-, llama- and GPT-2-style models; "
            f"this one is {getattr(model.config, 'model_type', '')!r}. Choose the default encoder or decoder."
        )
    return family.name


def base_model(model):
    """The bare transformer inside a task model (no LM head: logits are not needed here)."""
    return families.base_model(model)


def layers_of(model) -> list:
    architecture(model)  # a model no family covers is refused in words
    return families.blocks(model)


def num_heads(model) -> int:
    return int(model.config.num_attention_heads)


def num_kv_heads(model) -> int:
    return int(getattr(model.config, "num_key_value_heads", None) or model.config.num_attention_heads)


def is_causal(model) -> bool:
    architecture(model)  # an unknown family is refused in words
    return families.family_of(model).causal


def scaled_dot_product_attention(query, key, value, mask=None):
    """The book's function, batched over heads, returning its intermediates too.

    query/key/value: (..., T, d_k); mask: bool (..., T, T), True where a query may look.
    Returns (output, weights, scores, scaled): scores = QK^T, scaled = scores / sqrt(d_k)
    (masked entries -inf), weights = softmax(scaled), output = weights V.
    """
    dim_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1))
    scaled = scores / math.sqrt(dim_k)
    if mask is not None:
        scaled = scaled.masked_fill(~mask, float("-inf"))
    weights = F.softmax(scaled, dim=-1)
    # A query row with no visible key (a left-padding position) has no distribution: use zeros.
    weights = torch.nan_to_num(weights, nan=0.0)
    return torch.matmul(weights, value), weights, scores, scaled


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension (the llama convention)."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (i, i + d/2) pair of x by the position's angle: x cos + rotate_half(x) sin."""
    return x * cos + rotate_half(x) * sin


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(B, H_kv, T, d) -> (B, H_kv * n_rep, T, d): query head h uses key/value head h // n_rep."""
    return x if n_rep == 1 else torch.repeat_interleave(x, n_rep, dim=1)


def build_mask(attention_mask: torch.Tensor, causal: bool) -> torch.Tensor:
    """Bool (B, 1, T, T): key j is visible to query i (not padding; and j <= i if causal)."""
    keys = attention_mask.bool()[:, None, None, :]
    t = attention_mask.shape[-1]
    if causal:
        tri = torch.ones(t, t, dtype=torch.bool, device=attention_mask.device).tril()
        return keys & tri[None, None]
    return keys.expand(-1, 1, t, -1)


def run_model(model, inputs: dict) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """One forward pass: the model's own attention weights and each layer's input hidden states.

    Inputs of layers are captured with forward pre-hooks (robust to how a given
    transformers version arranges `hidden_states`).
    """
    layers = layers_of(model)
    captured: dict[int, torch.Tensor] = {}
    hooks = []
    owner = threading.get_ident()  # another tab may run the same model in another thread meanwhile
    for i, layer in enumerate(layers):
        def hook(_module, args, kwargs, i=i):
            if threading.get_ident() == owner:
                captured[i] = args[0] if args else kwargs["hidden_states"]
        hooks.append(layer.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        with torch.inference_mode():
            out = base_model(model)(**inputs, output_attentions=True)
    finally:
        for h in hooks:
            h.remove()
    attentions = list(out.attentions or ())
    if len(attentions) != len(layers) or any(a is None for a in attentions):
        raise LabError(
            "The model returned no attention weights: it must be loaded with "
            "attn_implementation='eager' (SDPA and flash attention do not return them)."
        )
    return [a.float() for a in attentions], [captured[i] for i in range(len(layers))]


@dataclass
class LayerMath:
    """Every intermediate of one layer's attention, all heads, float32.

    Shapes (B batch, H query heads, H_kv key/value heads, T tokens, D model dim, d head dim):
    x (B,T,D) the attention's input after any pre-norm; q (B,H,T,d); k, v (B,H_kv,T,d) before
    rotary / repetition; q_rot, k_rot after rotary (None without rotary); k_rep, v_rep
    (B,H,T,d) the keys/values each query head uses; scores (B,H,T,T) = QK^T; scaled =
    scores / sqrt(d) with -inf where masked; mask (B,1,T,T) bool; weights (B,H,T,T);
    output (B,H,T,d).
    """

    arch: str
    x: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    q_rot: torch.Tensor | None
    k_rot: torch.Tensor | None
    k_rep: torch.Tensor
    v_rep: torch.Tensor
    scores: torch.Tensor
    scaled: torch.Tensor
    mask: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor
    cos: torch.Tensor | None = None
    sin: torch.Tensor | None = None


def _linear(layer: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    w = layer.weight.float()
    b = layer.bias.float() if layer.bias is not None else None
    return F.linear(x, w, b)


def _heads(x: torch.Tensor, n: int, d: int) -> torch.Tensor:
    b, t, _ = x.shape
    return x.view(b, t, n, d).transpose(1, 2)


def _rms_norm(norm, x: torch.Tensor) -> torch.Tensor:
    """Llama's RMSNorm written out: x / rms(x) * weight (variance in float32)."""
    eps = getattr(norm, "variance_epsilon", None) or getattr(norm, "eps", 1e-6)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * norm.weight.float()


def layer_math(model, layer_index: int, hidden: torch.Tensor, attention_mask: torch.Tensor) -> LayerMath:
    """Recompute layer `layer_index`'s attention from its input `hidden` (B,T,D) and weights."""
    arch = architecture(model)
    layers = layers_of(model)
    if not 0 <= layer_index < len(layers):
        raise InputError(f"Layer {layer_index} does not exist: choose 0 to {len(layers) - 1}.")
    layer = layers[layer_index]
    cfg = model.config
    x = hidden.float()
    attention_mask = attention_mask.to(x.device)
    h = num_heads(model)
    q_rot = k_rot = cos = sin = None
    with torch.inference_mode():
        if arch == "bert":
            attn = layer.attention.self
            pos_type = getattr(cfg, "position_embedding_type", "absolute")
            if pos_type not in (None, "absolute"):
                raise UnsupportedModel(f"Relative position attention ({pos_type}) is not supported here.")
            d = attn.attention_head_size
            q = _heads(_linear(attn.query, x), h, d)
            k = _heads(_linear(attn.key, x), h, d)
            v = _heads(_linear(attn.value, x), h, d)
            k_rep, v_rep = k, v
        elif arch == "llama":
            attn = layer.self_attn
            x = _rms_norm(layer.input_layernorm, x)  # pre-norm: inside the layer, before q/k/v
            d = attn.head_dim
            h_kv = num_kv_heads(model)
            q = _heads(_linear(attn.q_proj, x), h, d)
            k = _heads(_linear(attn.k_proj, x), h_kv, d)
            v = _heads(_linear(attn.v_proj, x), h_kv, d)
            if getattr(attn, "q_norm", None) is not None:  # some llama-likes normalise q/k per head
                q = _rms_norm(attn.q_norm, q.transpose(1, 2)).transpose(1, 2)
                k = _rms_norm(attn.k_norm, k.transpose(1, 2)).transpose(1, 2)
            t = x.shape[1]
            cos, sin = encodings.rotary_cos_sin_for(model, t, device=x.device)
            q_rot = apply_rotary(q, cos[None, None], sin[None, None])
            k_rot = apply_rotary(k, cos[None, None], sin[None, None])
            k_rep = repeat_kv(k_rot, h // h_kv)
            v_rep = repeat_kv(v, h // h_kv)
        else:  # gpt
            attn = layer.attn
            x = F.layer_norm(x, x.shape[-1:], layer.ln_1.weight.float(), layer.ln_1.bias.float(), layer.ln_1.eps)
            qkv = torch.addmm(attn.c_attn.bias.float(), x.reshape(-1, x.shape[-1]), attn.c_attn.weight.float())
            qkv = qkv.view(*x.shape[:2], -1)
            d = attn.head_dim
            q, k, v = (_heads(p, h, d) for p in qkv.split(attn.split_size, dim=2))
            k_rep, v_rep = k, v
        mask = build_mask(attention_mask, causal=arch != "bert")
        query = q_rot if q_rot is not None else q
        output, weights, scores, scaled = scaled_dot_product_attention(query, k_rep, v_rep, mask)
        if arch == "gpt2":  # GPT-2's optional extra scalings, applied the same way the model does
            extra = 1.0 if getattr(cfg, "scale_attn_weights", True) else math.sqrt(d)
            if getattr(cfg, "scale_attn_by_inverse_layer_idx", False):
                extra /= float(layer_index + 1)
            if extra != 1.0:
                scaled = (scores / math.sqrt(d) * extra).masked_fill(~mask, float("-inf"))
                weights = torch.nan_to_num(F.softmax(scaled, dim=-1), nan=0.0)
                output = torch.matmul(weights, v_rep)
    return LayerMath(arch, x, q, k, v, q_rot, k_rot, k_rep, v_rep, scores, scaled, mask, weights, output, cos, sin)


def valid_query_rows(attention_mask: torch.Tensor) -> torch.Tensor:
    """Bool (B, 1, T, 1): rows that are real tokens (padding queries are not compared)."""
    return attention_mask.bool()[:, None, :, None]


def max_abs_diff(ours: torch.Tensor, theirs: torch.Tensor, attention_mask: torch.Tensor) -> float:
    """Largest |ours - theirs| over real query rows (padding rows have no meaning)."""
    diff = (ours.float() - theirs.float().to(ours.device)).abs()
    diff = diff.masked_fill(~valid_query_rows(attention_mask.to(ours.device)), 0.0)
    return float(diff.max()) if diff.numel() else 0.0


def compare_all_layers(model, inputs: dict) -> list[list[float]]:
    """Max abs diff of our weights vs the model's, per layer and head: [[L][H]] floats."""
    attentions, hiddens = run_model(model, inputs)
    mask = inputs["attention_mask"]
    rows = valid_query_rows(mask.to(attentions[0].device))
    table = []
    for i, (theirs, hidden) in enumerate(zip(attentions, hiddens)):
        ours = layer_math(model, i, hidden, mask).weights
        diff = (ours - theirs.to(ours.device)).abs().masked_fill(~rows, 0.0)
        table.append(diff.amax(dim=(0, 2, 3)).tolist())
    return table
