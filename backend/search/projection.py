"""A corpus's embeddings in two dimensions (PCA), for the search map."""

from __future__ import annotations

import numpy as np


def pca_2d(vectors: np.ndarray, max_fit: int = 50_000, seed: int = 0) -> dict:
    """PCA by SVD of the centred data (fit on a sample when big); -> mean, components, coords."""
    x = np.asarray(vectors, dtype=np.float32)
    fit = x
    if len(x) > max_fit:
        fit = x[np.random.default_rng(seed).choice(len(x), size=max_fit, replace=False)]
    mean = fit.mean(axis=0)
    if len(fit) < 2:
        comps = np.zeros((2, x.shape[1]), dtype=np.float32)
        comps[0, 0] = 1.0
        explained = [1.0, 0.0]
    else:
        _, s, vt = np.linalg.svd(fit - mean, full_matrices=False)
        comps = vt[:2]
        if comps.shape[0] < 2:
            comps = np.vstack([comps, np.zeros_like(comps)])
        var = s ** 2
        explained = [round(float(v / var.sum()), 4) if var.sum() > 0 else 0.0 for v in var[:2]]
    coords = (x - mean) @ comps.T
    return {"mean": mean, "components": comps.astype(np.float32), "coords": coords,
            "explained": explained}
