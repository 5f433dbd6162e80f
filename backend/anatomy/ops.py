"""The few tensor operations every recipe is built from, written out so the tab can show them.

Weights are read in float32 whatever the model's dtype (`.float()` is free on a float32 CPU
model), so the recomputation means the same thing on a bf16 GPU. Attention itself is the
book's `scaled_dot_product_attention` from backend/engines/attention/math.py, not a second copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from backend.engines.attention.math import scaled_dot_product_attention
from backend.runtime.errors import LabError


class UnsupportedModel(LabError):
    """No from-scratch recipe for this architecture (or this variant of it)."""


@dataclass
class Context:
    """What every layer needs besides its own weights and input.

    mask: bool (B, 1, T, T), True where a query may look at a key (padding, and causal for a
    decoder); cos/sin: rotary tables (T, d) for llama, else None.
    """

    config: object
    mask: torch.Tensor
    cos: torch.Tensor | None = None
    sin: torch.Tensor | None = None
    layer_index: int = 0


def linear(layer, x: torch.Tensor) -> torch.Tensor:
    """y = x W^T + b (an nn.Linear)."""
    bias = layer.bias.float() if layer.bias is not None else None
    return F.linear(x, layer.weight.float(), bias)


def conv1d(layer, x: torch.Tensor) -> torch.Tensor:
    """GPT-2's Conv1D is a linear layer with the weight stored transposed: y = x W + b."""
    return torch.addmm(layer.bias.float(), x.reshape(-1, x.shape[-1]), layer.weight.float()).view(*x.shape[:-1], -1)


def layer_norm(norm, x: torch.Tensor) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) * gamma + beta, over the hidden dimension."""
    return F.layer_norm(x, x.shape[-1:], norm.weight.float(), norm.bias.float(), norm.eps)


def rms_norm(norm, x: torch.Tensor) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) * gamma: LayerNorm without the mean and the bias."""
    eps = getattr(norm, "variance_epsilon", None) or getattr(norm, "eps", 1e-6)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * norm.weight.float()


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, n_heads * d) -> (B, n_heads, T, d): each head gets its own slice of the features."""
    b, t, _ = x.shape
    return x.view(b, t, n_heads, -1).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, n_heads, T, d) -> (B, T, n_heads * d): the heads' outputs side by side again."""
    b, _, t, _ = x.shape
    return x.transpose(1, 2).reshape(b, t, -1)


def attend(q, k, v, mask):
    """Scaled dot-product attention; also returns what the tab draws: (output, parts).

    parts = (scores / sqrt(d_k) before the mask, the mask, the softmax weights after it).
    """
    out, weights, scores, _ = scaled_dot_product_attention(q, k, v, mask)
    return out, (scores / math.sqrt(q.size(-1)), mask, weights)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GPT-2's GELU: the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
}


def activation(name: str):
    """The feed-forward non-linearity a config names (gelu for BERT, gelu_new for GPT-2, silu for llama)."""
    if name not in ACTIVATIONS:
        raise UnsupportedModel(f"The activation {name!r} has no from-scratch recipe here.")
    return ACTIVATIONS[name]
