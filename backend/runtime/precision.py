"""Comparisons in low precision: what rounding to expect, and a float32 twin to compare in.

A tab that recomputes a model by hand (Anatomy, Attention maths, the interventions' second
mechanism) compares its numbers with the model's own. On a GPU the hub serves bfloat16 or
float16 (`device.dtype_for`), whose few mantissa bits round every operation: the model's own
numbers then differ from an exact recomputation by rounding, not by a mistake. So such a
comparison runs on `float32_twin(model)`: the same weights (bf16 and fp16 values are exact in
float32) computed in float32, where 1e-4 means "the same computation". The served dtype's own
gap is reported beside it, with what its mantissa predicts (`rounding_note`).
"""

from __future__ import annotations

import copy
import math

# Bits of precision of the significand (the stored mantissa plus the implicit leading 1).
MANTISSA_BITS = {"float32": 24, "bfloat16": 8, "float16": 11, "float64": 53}


def dtype_name(model_or_dtype) -> str:
    """'float32', 'bfloat16', ... for a model (its first floating parameter) or a torch dtype."""
    import torch

    dtype = model_or_dtype
    if isinstance(model_or_dtype, torch.nn.Module):
        dtype = next((p.dtype for p in model_or_dtype.parameters() if p.is_floating_point()), torch.float32)
    return str(dtype).replace("torch.", "")


def relative_rounding(dtype) -> float:
    """Machine epsilon 2^(1 - bits): the relative step between neighbouring numbers of `dtype`
    (bfloat16 7.8e-3, float16 9.8e-4, float32 1.2e-7). One rounding costs at most half of it."""
    name = dtype if isinstance(dtype, str) else dtype_name(dtype)
    return 2.0 ** (1 - MANTISSA_BITS.get(name, 24))


def is_float32(model) -> bool:
    """True when every floating parameter and buffer of `model` is float32 (nothing to upcast)."""
    import torch

    tensors = list(model.parameters()) + list(model.buffers())
    return all(t.dtype == torch.float32 for t in tensors if t.is_floating_point())


def float32_twin(model):
    """`model` itself when it is float32; else a float32 deep copy on the same device (same
    weights, exactly: every bf16/fp16 value is a float32 value). The served model is never changed."""
    if is_float32(model):
        return model
    twin = copy.deepcopy(model).float().eval()
    _exact_rotary(twin)
    return twin


def _exact_rotary(model) -> None:
    """Rotary frequencies are computed, not learned: a model cast with `.to(bfloat16)` rounded them
    too, so the twin's are computed again in float32 (a model loaded in bf16 kept them float32)."""
    import torch

    for module in model.modules():
        inv = getattr(module, "inv_freq", None)
        if inv is None or getattr(module, "config", None) is None or not hasattr(module, "original_inv_freq"):
            continue
        try:
            fresh = type(module)(module.config)
        except Exception:  # another constructor: keep the upcast values
            continue
        for name in ("inv_freq", "original_inv_freq"):
            setattr(module, name, getattr(fresh, name).to(device=inv.device, dtype=torch.float32))


COMPARED = "The recomputation is therefore compared with the model's forward in float32 on the same weights"


def rounding_note(dtype, gap: float | None = None, scale: float | None = None, compared: str = COMPARED) -> str:
    """One sentence a tab shows for a model served in `dtype`: what its mantissa predicts, and
    the measured gap between its own forward and the float32 one when given (relative to the
    largest value `scale` when given). Empty for float32."""
    name = dtype if isinstance(dtype, str) else dtype_name(dtype)
    if name in ("float32", "float64"):
        return ""
    bits, eps = MANTISSA_BITS.get(name, 24), relative_rounding(name)
    line = (f"The model serves in {name}, which keeps {bits} bits of mantissa: each operation rounds by up to "
            f"{eps / 2:.1e} relative, so expect about 1e-{_decade(eps)} relative between its own numbers and "
            f"exact ones (more after many layers). {compared}")
    if gap is not None:
        line += f"; the {name} forward itself differs from that by up to {gap:.2g}"
        if scale:
            line += f" where values reach {scale:.3g} ({gap / scale:.1e} relative)"
        line += ": rounding, not a mistake"
    return line + "."


def _decade(eps: float) -> int:
    """The power of ten a relative step of `eps` rounds to (7.8e-3 -> 2, 9.8e-4 -> 3)."""
    return round(-math.log10(eps))
