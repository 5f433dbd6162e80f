"""Multinomial logistic regression on frozen features: the book's "feature extraction" classifier.

Fitted full-batch with L-BFGS in torch (plain tensors, no nn.Module, so it is not "running a
model" and needs no GPU task): standardised features, L2 penalty as scikit-learn's default
(C = 1 on the summed loss). A few hundred examples x 384 features fit in well under a second.
The fitted probe is plain numpy, small, and pickles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.engines.classify.probe_recipe import C, LBFGS, MIN_SCALE


@dataclass
class Probe:
    mean: np.ndarray
    scale: np.ndarray
    weight: np.ndarray  # (n_features, n_labels)
    bias: np.ndarray  # (n_labels,)
    iterations: int = 0

    def logits(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float32) - self.mean) / self.scale
        return z @ self.weight + self.bias

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = self.logits(x).astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.mean, self.scale, self.weight, self.bias))


def fit(x: np.ndarray, y, n_labels: int, c: float = C, max_iter: int = LBFGS["max_iter"], seed: int = 0) -> Probe:
    """Fit on features `x` (n, d) and label indices `y`; deterministic for a given input."""
    x = np.asarray(x, dtype=np.float32)
    y_t = torch.as_tensor(np.asarray(y, dtype=np.int64))
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > MIN_SCALE, scale, 1.0).astype(np.float32)
    z = torch.as_tensor((x - mean) / scale)
    n, d = z.shape
    torch.manual_seed(seed)
    w = torch.zeros(d, n_labels, requires_grad=True)
    b = torch.zeros(n_labels, requires_grad=True)
    l2 = 1.0 / (c * n)  # sklearn: sum(CE) + ||w||^2 / (2C)  ==  n * (mean(CE) + l2/2 ||w||^2)
    opt = torch.optim.LBFGS([w, b], **{**LBFGS, "max_iter": max_iter})

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(z @ w + b, y_t) + 0.5 * l2 * (w * w).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    iters = int(opt.state[opt._params[0]].get("n_iter", 0))
    return Probe(mean.astype(np.float32), scale, w.detach().numpy().copy(), b.detach().numpy().copy(), iters)
