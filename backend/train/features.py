"""Frozen-encoder features: mean-pooled last hidden states of the `embedder` role.

The book's feature-extraction recipe, with the pooling the embedder was trained with
(`backend.engines.embedding.vectors.embed_texts`: mean over tokens, L2-normalised). The model runs only in
`_embed_chunk`, a stateless GPU task; the cache of features of the shipped datasets lives in
the app's process and is shared by every session (uploads are never cached across sessions).
Zero-shot by embedding similarity reuses the Pipelines' `classify_by_similarity`.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np

from backend.engines.classify.finetune import rate_key, text_units
from backend.engines.classify.similarity import DEFAULT_TEMPLATE
from backend.engines.embedding.vectors import CHUNK  # texts per GPU call: a couple of seconds on a CPU, then progress
from backend.runtime.rates import RATES
from backend.train import gpu

EMBED_WORK = "embedding characters"  # the frozen encoder's features (measured rate, see runtime.rates)
ZERO_SHOT_WORK = "zero-shot characters"

MAX_CACHED = 20_000  # vectors of shipped texts kept per checkpoint (~30 MB at 384 dims)


_CACHE: dict[str, dict[str, np.ndarray]] = {}
_CACHE_LOCK = threading.Lock()


def extract(texts: list[str], checkpoint: str, override: str | None = None, cache: bool = False,
            progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """(n, dim) float32 features, chunk by chunk; `cache` reuses/keeps vectors of shipped texts."""
    texts = list(texts)
    out: list[np.ndarray | None] = [None] * len(texts)
    todo = list(range(len(texts)))
    if cache:
        with _CACHE_LOCK:
            store = _CACHE.setdefault(checkpoint, {})
            for i, t in enumerate(texts):
                if t in store:
                    out[i] = store[t]
        todo = [i for i in todo if out[i] is None]
    t0 = time.perf_counter()
    for start in range(0, len(todo), CHUNK):
        idx = todo[start:start + CHUNK]
        vecs = gpu.embed_chunk([texts[i] for i in idx], override)
        for i, v in zip(idx, vecs):
            out[i] = v
        if progress is not None:
            progress(min(start + CHUNK, len(todo)), len(todo))
    if todo:
        RATES.add(rate_key(EMBED_WORK, override or ""), text_units(texts[i] for i in todo), time.perf_counter() - t0)
    if cache and todo:
        with _CACHE_LOCK:
            store = _CACHE.setdefault(checkpoint, {})
            for i in todo:
                if len(store) >= MAX_CACHED:
                    break
                store[texts[i]] = out[i]
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack(out).astype(np.float32)


def uncached(texts: list[str], checkpoint: str | None) -> list[str]:
    """The texts whose features `extract(..., cache=True)` would still have to compute."""
    with _CACHE_LOCK:
        store = _CACHE.get(checkpoint or "", {})
        return [t for t in texts if t not in store]


def zero_shot_probs(texts: list[str], labels: list[str], template: str = DEFAULT_TEMPLATE,
                    override: str | None = None) -> np.ndarray:
    """(n, n_labels) softmax(cos / T) scores in `labels` order, by the Pipelines' method."""
    descriptions = {l: template.format(l) if "{}" in template else l for l in labels}
    rows = []
    t0 = time.perf_counter()
    for start in range(0, len(texts), CHUNK):
        rows += gpu.zero_shot_chunk(list(texts[start:start + CHUNK]), descriptions, override)
    RATES.add(rate_key(ZERO_SHOT_WORK, override or ""), text_units(texts), time.perf_counter() - t0)
    out = np.zeros((len(texts), len(labels)))
    pos = {l: j for j, l in enumerate(labels)}
    for i, r in enumerate(rows):
        for l, s in zip(r["labels"], r["scores"]):
            out[i, pos[l]] = s
    return out
