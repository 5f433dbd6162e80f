"""Magnitude pruning (the book's chapter 8) with `torch.nn.utils.prune`, and what it buys.

`pruned_copy` zeroes the smallest-magnitude weights of the encoder's Linear layers, globally
(one threshold across all of them, L1 = magnitude), and makes the pruning permanent. This is
one-shot pruning without retraining (the book's movement pruning prunes while fine-tuning), so
accuracy falls as sparsity grows. What it does not buy on a CPU without sparse kernels: the
weights are still dense tensors, so the saved file is as large and a forward pass multiplies
the zeros all the same; what it does buy is a file that compresses (zeros deflate).
"""

from __future__ import annotations

import copy
import zlib
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils import prune


def encoder_linears(model: nn.Module) -> list[tuple[nn.Linear, str]]:
    """The Linear layers inside an encoder, wherever the encoder sits: `encoder.*` in a bare model,
    `bert.encoder.*` in a transformers head, `classifier.encoder.*` in the app's sentiment classifier."""
    return [(m, "weight") for name, m in model.named_modules()
            if isinstance(m, nn.Linear) and "encoder" in name.split(".")[:-1]]


def pruned_copy(model: nn.Module, sparsity: float) -> nn.Module:
    """A copy of `model` with `sparsity` of its encoder Linear weights set to zero (global L1)."""
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}")
    out = copy.deepcopy(model).eval()
    params = encoder_linears(out)
    if sparsity > 0 and params:
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=float(sparsity))
        for module, name in params:
            prune.remove(module, name)  # the mask applied for good: plain dense weights again
    return out


def sparsity_of(model: nn.Module) -> float:
    """The share of the encoder's Linear weights that are exactly zero."""
    params = [m.weight for m, _ in encoder_linears(model)]
    total = sum(p.numel() for p in params)
    return float(sum(int((p == 0).sum()) for p in params) / total) if total else 0.0


def compressed_mb(path: Path, level: int = 6) -> float:
    """The file's size after deflate (zip's compression), in MB: what zeros buy on a download."""
    comp = zlib.compressobj(level)
    total = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            total += len(comp.compress(chunk))
    total += len(comp.flush())
    return total / 2 ** 20

