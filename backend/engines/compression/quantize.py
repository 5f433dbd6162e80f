"""int8 copies of a model by dynamic quantization, and what a model weighs (the book's chapter 8).

Dynamic quantization stores each `nn.Linear` weight as int8 with one scale per output row
(per-channel) and quantizes the activations on the fly at every call: a decode step reads
about a quarter of the fp32 bytes, which is what bounds decoding on a CPU.

Library choice (measured on this 2-core CPU, torch 2.13, SmolLM2-135M, 20 prompts x 32 greedy
tokens; bench/results/efficiency.md, `bench/efficiency.py --variants`): torch.ao's dynamic int8
Linear runs fbgemm's int8 kernels at 2.2-2.4x the fp32 tok/s. torchao 0.18 (its announced
successor) ships no x86 CPU int8 kernels in its wheel: eager `Int8DynamicActivationInt8WeightConfig`
ran at 0.36x fp32 and `Int8WeightOnlyConfig` at 0.52x (it dequantizes every weight at every
call), and its import costs ~4 s. So we use torch.ao, deprecated but present in every torch that
requirements.txt allows (<2.14), and say so when it is missing. Plain `quantize_dynamic` tripled
perplexity (113 vs 31); our Linear keeps its packed weights and kernel and fixes that (perplexity
+4.9%, as torchao's per-token scales give: +4.9%; see `TokenScaledInt8Linear`).

The shared fp32 model is never touched: we quantize a deep copy.
"""

from __future__ import annotations

import copy
import io
import threading
import warnings
import weakref
from typing import Any

import torch
from torch import nn

from backend.runtime.once import BuildOnce
from backend.runtime.errors import LabError

# Linear layers kept in fp32, by the last part of their name. None by default: quantizing the
# output head too (576 x 49,152 in SmolLM2) took int8 from 1.8x to 2.6x fp32's tok/s for +0.7%
# perplexity and the same greedy agreement (the divergences come from the body's weights).
DEFAULT_SKIP: tuple[str, ...] = ()


class QuantizationUnavailable(LabError):
    """This torch has no dynamic quantization (torch.ao was removed): say what to install."""


def _quantize_dynamic():
    fn = getattr(getattr(torch, "ao", None), "quantization", None)
    fn = getattr(fn, "quantize_dynamic", None) if fn is not None else None
    if fn is None or "fbgemm" not in torch.backends.quantized.supported_engines and \
            "x86" not in torch.backends.quantized.supported_engines:
        raise QuantizationUnavailable(
            f"int8 dynamic quantization is not available in torch {torch.__version__} on this machine "
            "(torch.ao.quantization.quantize_dynamic with the fbgemm/x86 server). Install torch<2.14 (CPU build).")
    return fn


def _conv1d_as_linear(model: nn.Module) -> int:
    """GPT-2 keeps its projections in transformers' Conv1D (a transposed Linear), which dynamic
    quantization does not know: swap each for the equal nn.Linear. Returns how many."""
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child).__name__ == "Conv1D" and hasattr(child, "nf") and child.weight.dim() == 2:
                lin = nn.Linear(child.weight.shape[0], child.nf, bias=child.bias is not None)
                with torch.no_grad():
                    lin.weight.copy_(child.weight.t())
                    if child.bias is not None:
                        lin.bias.copy_(child.bias)
                setattr(parent, name, lin)
                swapped += 1
    return swapped


def _has_vnni() -> bool:
    """x86 int8 dot products without 16-bit saturation (AVX512-VNNI / AVX-VNNI / AMX)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            flags = set(next((line for line in fh if line.startswith("flags")), "").split())
    except OSError:
        return False
    return bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})


FULL_RANGE = _has_vnni()


def _token_scaled_class():
    """torch.ao's dynamic int8 Linear with two changes, both measured on SmolLM2 (bench/results/efficiency.md):

    - activations use the full 8 bits when the CPU has VNNI (torch.ao always passes
      reduce_range=True, 7 bits, against a 16-bit overflow that only pre-VNNI CPUs have):
      token-by-token perplexity on 4 texts +0.5% instead of +8%;
    - a multi-token input (a prompt, a perplexity text) is not quantized with one scale for all
      its tokens: rows are grouped by the power of two of their range, one scale per group
      (within 1 bit of per-token scales, as torchao's int8 dynamic activations do). SmolLM2's
      first token carries activations 100x the others; one shared scale tripled perplexity.
    One decoded token is one row: one call, no grouping.
    """
    from torch.ao.nn.quantized.dynamic import Linear as QLinear

    class TokenScaledInt8Linear(QLinear):
        full_range = FULL_RANGE

        def _run(self, x):
            return torch.ops.quantized.linear_dynamic(x, self._packed_params._packed_params,
                                                      reduce_range=not self.full_range)

        def forward(self, x):
            flat = x.reshape(-1, x.shape[-1]).float()
            if flat.shape[0] <= 1:
                y = self._run(flat)
            else:
                span = (flat.amax(dim=1) - flat.amin(dim=1)).clamp_min(1e-12)
                bins = torch.floor(torch.log2(span))
                groups = torch.unique(bins)
                if groups.numel() == 1:
                    y = self._run(flat)
                else:
                    y = flat.new_empty(flat.shape[0], self.out_features)
                    for b in groups:
                        rows = (bins == b).nonzero().squeeze(1)
                        y[rows] = self._run(flat[rows])
            return y.reshape(*x.shape[:-1], self.out_features).to(x.dtype)

        def _get_name(self):
            return "TokenScaledInt8Linear"

    return TokenScaledInt8Linear


_TOKEN_SCALED = None


def token_scaled_class():
    global _TOKEN_SCALED
    if _TOKEN_SCALED is None:
        _TOKEN_SCALED = _token_scaled_class()
    return _TOKEN_SCALED


def linear_names(model: nn.Module, skip: tuple[str, ...] = DEFAULT_SKIP) -> list[str]:
    """The Linear layers that int8 quantization will convert (those not named in `skip`)."""
    return [n for n, m in model.named_modules()
            if isinstance(m, nn.Linear) and n.rsplit(".", 1)[-1] not in skip]


def int8_copy(model: nn.Module, skip: tuple[str, ...] = DEFAULT_SKIP, token_scales: bool = True) -> nn.Module:
    """A new CPU model whose Linear layers (except `skip`) hold int8 weights, per-channel scales.

    The argument is left exactly as it was (weights, device, dtype, training flag): we
    quantize a deep copy moved to CPU in fp32, since fbgemm's int8 kernels are CPU-only.
    `token_scales=False` gives torch.ao's plain dynamic Linear (one 7-bit scale per call).
    """
    quantize_dynamic = _quantize_dynamic()
    from torch.ao.quantization import per_channel_dynamic_qconfig

    work = copy.deepcopy(model).to("cpu", torch.float32).eval()
    _conv1d_as_linear(work)
    names = linear_names(work, skip)
    with warnings.catch_warnings():  # torch.ao announces its own deprecation on every call
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        out = quantize_dynamic(work, {n: per_channel_dynamic_qconfig for n in names}, dtype=torch.qint8)
    if token_scales:
        from torch.ao.nn.quantized.dynamic import Linear as QLinear

        cls = token_scaled_class()
        for m in out.modules():
            if type(m) is QLinear:
                m.__class__ = cls  # same packed weights, our forward
    out.eval()
    out._tlab_int8 = {"quantized_linears": len(names), "kept_fp32": sorted(set(skip))}
    return out


def count_int8_linears(model: nn.Module) -> int:
    """How many layers of `model` are dynamically quantized Linear layers."""
    from torch.ao.nn.quantized.dynamic import Linear as QLinear

    return sum(isinstance(m, QLinear) for m in model.modules())


# ---------------------------------------------------------------------------- sizes


def _tensor_bytes(t: torch.Tensor) -> tuple[Any, int]:
    """(storage key for de-duplication, bytes) of one tensor, quantized ones included."""
    if t.is_quantized:
        extra = 0
        if t.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
            extra = t.q_per_channel_scales().numel() * 8 + t.q_per_channel_zero_points().numel() * 8
        return None, t.numel() * t.element_size() + extra
    if hasattr(t, "__tensor_flatten__"):  # a tensor subclass (torchao's int8 weights): its inner tensors
        names, _ = t.__tensor_flatten__()
        inner = [getattr(t, n) for n in names]
        return ("subclass", id(t)), sum(_tensor_bytes(x)[1] for x in inner if isinstance(x, torch.Tensor))
    storage = t.untyped_storage()
    return (storage.data_ptr(), storage.device), storage.nbytes()


def memory_bytes(model: nn.Module) -> int:
    """Bytes the weights occupy in memory: every parameter, buffer and packed int8 weight,
    shared storages (tied embeddings) counted once."""
    seen: dict[Any, int] = {}
    for t in list(model.parameters()) + list(model.buffers()):
        key, n = _tensor_bytes(t.detach())
        seen[key] = n
    try:
        from torch.ao.nn.quantized.dynamic import Linear as QLinear
    except ImportError:  # no torch.ao: no packed weights either
        QLinear = ()
    for m in model.modules():
        if QLinear and isinstance(m, QLinear):
            w, b = m._weight_bias()  # unpacked copies: keyed by their module, not by the temporaries
            seen[("packed", id(m))] = _tensor_bytes(w)[1] + (_tensor_bytes(b.detach())[1] if b is not None else 0)
    return int(sum(seen.values()))


def disk_bytes(model: nn.Module) -> int:
    """Size of `torch.save(model.state_dict())`, as the book measures it (shared tensors once)."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getbuffer().nbytes


# ---------------------------------------------------------------------------- the per-process cache

_INT8: BuildOnce[nn.Module] = BuildOnce()  # (checkpoint, device, ..., skip) -> the int8 copy
_SLOTS: dict[str, tuple] = {}  # slot (a role) -> the key of its one int8 copy
_SIZES: "weakref.WeakKeyDictionary[nn.Module, dict]" = weakref.WeakKeyDictionary()  # dies with its model
_GUARD = threading.Lock()


def cached_int8(key: tuple, model: nn.Module, skip: tuple[str, ...] = DEFAULT_SKIP,
                slot: str | None = None) -> tuple[nn.Module, bool]:
    """The int8 copy of `model` for `key` (checkpoint, device...), built once per process.

    Returns (int8 model, built_now). Concurrent first calls build it once. With `slot` (a
    role), the slot holds one int8 copy: building another (the role now serves a different
    model) drops the old one, so memory stays bounded; a request still using it keeps its
    own reference until it finishes.
    """
    key = (*key, skip)
    built, now = _INT8.get(key, lambda: int8_copy(model, skip))
    if now and slot is not None:
        with _GUARD:
            old = _SLOTS.get(slot)
            if old is not None and old != key:
                _INT8.pop(old)
            _SLOTS[slot] = key
    return built, now


def int8_of(lm) -> tuple[nn.Module, bool]:
    """The cached int8 copy of a hub model (`models.LoadedModel`): one per role, shared by the
    Efficiency panel and the Decoding playground. Returns (int8 model, built_now)."""
    return cached_int8((lm.checkpoint, lm.kind, lm.device, lm.dtype, id(lm.model)), lm.model, slot=lm.role)


def cached_count() -> int:
    """How many int8 copies this process holds."""
    return len(_INT8)


def sizes(model: nn.Module) -> dict:
    """{"disk_mb", "memory_mb"} of a model, computed once per model object (they do not change)."""
    with _GUARD:
        found = _SIZES.get(model)
    if found is not None:
        return dict(found)
    out = {"disk_mb": disk_bytes(model) / 2**20, "memory_mb": memory_bytes(model) / 2**20}
    with _GUARD:
        _SIZES[model] = out
    return dict(out)


def clear_cache() -> None:
    _INT8.clear()
    with _GUARD:
        _SLOTS.clear()
        _SIZES.clear()
