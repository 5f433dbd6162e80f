"""The mechanism: hooks that remove or scale heads and sub-layers, and an independent check.

Where each family's pieces are (`sites`):
- the heads: the attention's output projection reads the concatenated head outputs
  [head 0 | head 1 | ...] (Llama `self_attn.o_proj`, BERT `attention.output.dense`, GPT-2
  `attn.c_proj`); a forward *pre*-hook multiplies head h's slice by its factor before the
  projection, so a removed head contributes nothing to what attention adds;
- a sub-layer: a forward hook on the module whose output is what the sub-layer adds to the
  residual stream (attention: that output projection; MLP: Llama `mlp.down_proj`, BERT
  `output.dense`, GPT-2 `mlp.c_proj`) returns it times the factor: 0 = it adds nothing
  (for BERT's post-norm blocks: LayerNorm(x + 0)).

`ablate(model, edits)` is a context manager: the hooks are removed on the way out, whatever
happened inside. They act only in the thread that opened it, so another request using the
same shared model at the same time (another lane) runs the model unchanged.

The independent mechanism edits *weights* instead of activations: scaling head h's columns of
the output projection (its rows, for GPT-2's Conv1D) equals scaling the head's output.
`edited_copy` does it on a deep copy (tests); `edited_weights` runs the projection with edited
weights from a forward hook, without copying the model (the API's check on every request).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

from backend.engines.attention import families
from backend.runtime.errors import InputError
from backend.interventions.spec import Edit

FAMILIES = tuple(f.name for f in families.FAMILIES)


@dataclass
class Sites:
    """Where one layer's interventions go."""

    o_proj: nn.Module  # reads the concatenated heads; its output is what attention adds
    mlp_out: nn.Module  # its output is what the MLP adds


@dataclass
class Layout:
    family: str
    layers: list[Sites]
    n_heads: int
    head_dim: int


def _conv1d(module: nn.Module) -> bool:
    return type(module).__name__ == "Conv1D"  # GPT-2: weight is (in, out), the transpose of nn.Linear's


def layout(model: nn.Module) -> Layout:
    """The blocks of a BERT, Llama or GPT-2 model (its family's adapter, backend.engines.attention.families)."""
    family = families.family_of(model)
    if family is None:
        raise InputError(f"Interventions know BERT, Llama and GPT-2 style models; "
                         f"{type(model).__name__} is none of these.")
    sites = [Sites(family.attn_out(b), family.mlp_out(b)) for b in families.blocks(model, family)]
    n_heads = families.num_heads(model)
    o = sites[0].o_proj
    width = o.weight.shape[0] if _conv1d(o) else o.weight.shape[1]
    return Layout(family.name, sites, n_heads, width // n_heads)


def _factors(edits: list[Edit], lay: Layout) -> tuple[dict[int, torch.Tensor], dict[tuple[int, str], float]]:
    """Per layer, one factor per input feature of the output projection; per sub-layer, its factor."""
    heads: dict[int, torch.Tensor] = {}
    parts: dict[tuple[int, str], float] = {}
    for e in edits:
        if e.part == "head":
            vec = heads.setdefault(e.layer, torch.ones(lay.n_heads * lay.head_dim, dtype=torch.float64))
            vec[e.head * lay.head_dim:(e.head + 1) * lay.head_dim] = e.scale
        else:
            parts[(e.layer, e.part)] = e.scale
    return heads, parts


def _mine(owner: int) -> bool:
    return threading.get_ident() == owner


@contextlib.contextmanager
def _hooked(register) -> Iterator[list]:
    """Hold the handles `register(handles)` adds; remove every one of them on the way out."""
    handles: list = []
    try:
        register(handles)
        yield handles
    finally:
        for h in handles:
            h.remove()


def ablate(model: nn.Module, edits: list[Edit]):
    """Context manager: `model` with `edits` applied by hooks in this thread (edits must be
    `spec.resolve`d). No edits: no hooks, the model exactly as it is."""
    lay = layout(model)
    heads, parts = _factors(edits, lay)
    owner = threading.get_ident()

    def head_hook(vec: torch.Tensor):
        def pre(module, args, kwargs):
            if not _mine(owner):
                return None
            x = args[0]
            return (x * vec.to(device=x.device, dtype=x.dtype),) + tuple(args[1:]), kwargs
        return pre

    def part_hook(scale: float):
        def post(module, args, output):
            if not _mine(owner):
                return None
            return torch.zeros_like(output) if scale == 0 else output * scale
        return post

    def register(handles: list) -> None:
        for layer, vec in heads.items():
            handles.append(lay.layers[layer].o_proj.register_forward_pre_hook(head_hook(vec), with_kwargs=True))
        for (layer, part), scale in parts.items():
            site = lay.layers[layer].o_proj if part == "attn" else lay.layers[layer].mlp_out
            handles.append(site.register_forward_hook(part_hook(scale)))

    return _hooked(register)


def _edited(module: nn.Module, vec: torch.Tensor | None, scale: float | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(weight, bias) of a projection with its input features scaled by `vec` and the whole by `scale`."""
    weight = module.weight.detach().clone()
    bias = None if module.bias is None else module.bias.detach().clone()
    if vec is not None:
        v = vec.to(device=weight.device, dtype=weight.dtype)
        weight = weight * (v[:, None] if _conv1d(module) else v[None, :])
    if scale is not None:
        weight = weight * scale
        bias = None if bias is None else bias * scale
    return weight, bias


def _project(module: nn.Module, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    if _conv1d(module):
        out = x.reshape(-1, x.shape[-1]) @ weight
        out = out if bias is None else out + bias
        return out.reshape(*x.shape[:-1], weight.shape[1])
    return nn.functional.linear(x, weight, bias)


def _weight_plan(edits: list[Edit], lay: Layout) -> dict[nn.Module, tuple]:
    heads, parts = _factors(edits, lay)
    plan: dict[nn.Module, tuple] = {}
    for i, sites in enumerate(lay.layers):
        if i in heads or (i, "attn") in parts:
            plan[sites.o_proj] = (heads.get(i), parts.get((i, "attn")))
        if (i, "mlp") in parts:
            plan[sites.mlp_out] = (None, parts[(i, "mlp")])
    return plan


def edited_weights(model: nn.Module, edits: list[Edit]):
    """Context manager: each affected projection computes its output from edited weights
    (no activation is touched, the model is not copied); this thread only, removed on exit."""
    lay = layout(model)
    owner = threading.get_ident()

    def hook(weight, bias):
        def post(module, args, output):
            return _project(module, args[0], weight, bias) if _mine(owner) else None
        return post

    def register(handles: list) -> None:
        for module, (vec, scale) in _weight_plan(edits, lay).items():
            handles.append(module.register_forward_hook(hook(*_edited(module, vec, scale))))

    return _hooked(register)


def edited_copy(model: nn.Module, edits: list[Edit]) -> nn.Module:
    """A deep copy of `model` whose projection weights carry `edits` (no hooks at all)."""
    clone = copy.deepcopy(model)
    lay = layout(clone)
    with torch.no_grad():
        for module, (vec, scale) in _weight_plan(edits, lay).items():
            weight, bias = _edited(module, vec, scale)
            module.weight.copy_(weight)
            if bias is not None:
                module.bias.copy_(bias)
    return clone
