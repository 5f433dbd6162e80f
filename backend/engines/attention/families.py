"""One adapter per architecture family: the transformers model types it covers, where its blocks
and its attention / MLP output projections are, and whether it is causal.

Anatomy's from-scratch recipes, the step-by-step attention maths and the interventions' hooks all
ask here, so a family is recognised one way everywhere (by `config.model_type`, as
TransformerLens' per-architecture adapters do), and a new family is added in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import nn


@dataclass(frozen=True)
class Family:
    name: str  # "bert" | "llama" | "gpt2"
    model_types: tuple[str, ...]  # transformers' config.model_type values it covers
    causal: bool  # a decoder: each token sees only the tokens before it
    blocks: Callable[[nn.Module], nn.ModuleList]  # the bare model -> its transformer blocks
    attn_out: Callable[[nn.Module], nn.Module]  # a block -> the projection after attention (heads concatenated)
    mlp_out: Callable[[nn.Module], nn.Module]  # a block -> the MLP's output projection


BERT = Family("bert", ("bert", "roberta", "xlm-roberta", "camembert"), False,  # post-norm, bidirectional
              lambda base: base.encoder.layer, lambda b: b.attention.output.dense, lambda b: b.output.dense)
LLAMA = Family("llama", ("llama", "mistral", "qwen2", "smollm3"), True,  # pre-norm, rotary, grouped KV heads
               lambda base: base.layers, lambda b: b.self_attn.o_proj, lambda b: b.mlp.down_proj)
GPT2 = Family("gpt2", ("gpt2",), True,  # pre-norm, fused c_attn projection, learned positions
              lambda base: base.h, lambda b: b.attn.c_proj, lambda b: b.mlp.c_proj)
FAMILIES: tuple[Family, ...] = (BERT, LLAMA, GPT2)
KNOWN = ", ".join(t for f in FAMILIES for t in f.model_types)


def base_model(model: nn.Module) -> nn.Module:
    """The bare transformer inside a task model (BertModel inside BertForSequenceClassification...)."""
    return getattr(model, getattr(model, "base_model_prefix", ""), model)


def family_of(model: nn.Module) -> Family | None:
    """The family of `model` (a task model, the bare transformer, or a module wrapping one, like the
    offline classifiers trained here), or None for one no family covers."""
    for m in (model, *model.modules()):
        model_type = getattr(getattr(m, "config", None), "model_type", None)
        if model_type:
            return next((f for f in FAMILIES if model_type in f.model_types), None)
    return None


def blocks(model: nn.Module, family: Family | None = None) -> list[nn.Module]:
    """The transformer blocks of `model`, in order (found inside a wrapper too)."""
    family = family or family_of(model)
    for m in (base_model(model), *model.modules()):
        try:
            found = family.blocks(m)
        except AttributeError:
            continue
        if isinstance(found, nn.ModuleList):
            return list(found)
    raise AttributeError(f"no {family.name} blocks inside {type(model).__name__}")


def config_of(model: nn.Module):
    """The transformers config of `model` or of the transformer it wraps."""
    return next(m.config for m in (model, *model.modules()) if getattr(m, "config", None) is not None)


def num_heads(model: nn.Module) -> int:
    cfg = config_of(model)
    return int(getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head"))
