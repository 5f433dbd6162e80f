"""Vectors and timing helpers the search benchmarks share: clustered synthetic embeddings, one
query at a time, a markdown table."""

from __future__ import annotations

import statistics
import time

import faiss
import numpy as np

K = 10


def clustered(n: int, d: int = 384, centers: int = 1000, noise: float = 1.0, seed: int = 0):
    """Gaussian clusters around unit centres, noise as large as the centre (norm ~1), then
    normalised: many overlapping topics, like sentence embeddings. Queries drawn the same way."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centers, d)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)

    def draw(m):
        v = c[rng.integers(0, centers, m)] + noise / np.sqrt(d) * rng.normal(size=(m, d)).astype(np.float32)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return draw(n), draw(1000)


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def table(headers, rows) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def plain_flat(x):
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    return index


def _single_ms(search_one, q, reps: int = 200) -> float:
    """Median ms of one query at a time (the app's case), over `reps` queries."""
    lat = []
    for row in q[:reps]:
        row = np.ascontiguousarray(row[None, :])
        t0 = time.perf_counter()
        search_one(row)
        lat.append(time.perf_counter() - t0)
    return statistics.median(lat) * 1000
