"""The book's `PerformanceBenchmark` (chapter 8): accuracy, latency and size of each variant.

A variant is a name, a `predict(texts) -> logits` callable (PyTorch, ONNX Runtime, anything)
and the files it is saved as. Every variant is measured the same way:
- accuracy on the test split (argmax of the logits against the labels);
- latency per query at batch 1: one fixed query, tokenisation included (what a caller waits
  for), `runs` timed calls after `warmup` untimed ones, mean and standard deviation in ms.
  The variants' calls are interleaved round by round (A, B, C, A, B, C...) so a noisy,
  shared machine slows them alike and the ratios stay honest;
- size on disk: the bytes of the files it was saved as (never a parameter count).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

ROUND = 10  # timed calls per variant per round


@dataclass
class Variant:
    name: str
    predict: Callable[[list[str]], np.ndarray]
    files: list[Path] = field(default_factory=list)


def size_mb(files: Sequence[Path]) -> float:
    return sum(Path(f).stat().st_size for f in files) / 2 ** 20


ACCURACY_BATCH = 32  # texts per call when a variant's accuracy is measured


def accuracy(variant: Variant, texts: list[str], labels: Sequence[int],
             batch: int = ACCURACY_BATCH) -> tuple[float, np.ndarray]:
    """(accuracy, predicted labels) of `variant` on `texts`."""
    preds = np.concatenate([variant.predict(texts[s:s + batch]).argmax(-1) for s in range(0, len(texts), batch)]) \
        if texts else np.zeros(0, dtype=np.int64)
    return (float(np.mean(preds == np.asarray(labels))) if len(texts) else 0.0), preds


def latency(variants: Sequence[Variant], query: str, runs: int = 100, warmup: int = 5,
            check: Callable[[], None] = lambda: None) -> dict[str, list[float]]:
    """Seconds per call of each variant on `query`, `runs` calls each, interleaved by rounds."""
    for v in variants:
        for _ in range(warmup):
            v.predict([query])
    times: dict[str, list[float]] = {v.name: [] for v in variants}
    while any(len(t) < runs for t in times.values()):
        check()
        for v in variants:
            for _ in range(min(ROUND, runs - len(times[v.name]))):
                t0 = time.perf_counter()
                v.predict([query])
                times[v.name].append(time.perf_counter() - t0)
    return times


def summary(times: list[float]) -> dict:
    ms = [1000 * t for t in times]
    return {"latency_ms_mean": round(statistics.fmean(ms), 3) if ms else None,
            "latency_ms_std": round(statistics.stdev(ms), 3) if len(ms) > 1 else 0.0,
            "latency_runs": len(ms)}


def run(variants: Sequence[Variant], texts: list[str], labels: Sequence[int], query: str, runs: int = 100,
        warmup: int = 5, check: Callable[[], None] = lambda: None) -> list[dict]:
    """One row per variant: accuracy, latency mean/std (ms), size (MB), predictions."""
    rows = []
    for v in variants:
        check()
        acc, preds = accuracy(v, texts, labels)
        rows.append({"name": v.name, "accuracy": round(acc, 4), "size_mb": round(size_mb(v.files), 3),
                     "files": [Path(f).name for f in v.files], "predictions": preds.tolist()})
    times = latency(variants, query, runs, warmup, check)
    for row in rows:
        row.update(summary(times[row["name"]]))
    return rows
