"""Short embedding requests that arrive together share one forward.

Twenty visitors classifying one sentence each cost twenty forwards when served one after
the other; padded into one batch they cost little more than one (at batch 1 the encoder
mostly waits on memory). A `Coalescer` per loaded model: a caller hands in its few texts and
waits; one worker thread takes everything waiting (up to `max_texts`), runs a single forward,
and hands each caller its own rows, or the exception. Nothing waits on an idle server: a lone
request runs at once; requests pile up only while a forward runs, which is when batching pays.

Who uses it: `backend.engines.embedding.vectors.embed_texts` sends small requests here (classify and
zero-shot by embedding, the trained sentiment probe, search queries). Off on ZeroGPU, where
every model call runs in its own forked GPU worker and there is nothing to share.
"""

from __future__ import annotations

import queue
import threading
import weakref
from concurrent.futures import Future
from typing import Callable, Sequence

import numpy as np

from backend.runtime import budget
from backend.runtime.config import get_settings
from backend.runtime.device import on_zerogpu

SMALL_REQUEST = 8  # texts: larger requests batch themselves and run directly

RunBatch = Callable[[list[str]], np.ndarray]  # texts -> one row per text


class Coalescer:
    """One worker thread that batches the texts of concurrent callers into single forwards."""

    def __init__(self, run_batch: RunBatch, max_texts: int, name: str = "tlab-batch"):
        self._run = run_batch
        self._max = max(1, int(max_texts))
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self.forwards = 0  # how many forwards served how many requests: the bench reads these
        self.requests = 0
        self.largest = 0
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, texts: Sequence[str]) -> np.ndarray:
        """This caller's rows, computed in a forward it may share with other callers."""
        done: Future = Future()
        self._queue.put((list(texts), done))
        return done.result()

    def close(self) -> None:
        self._queue.put(None)

    def _take(self) -> list[tuple[list[str], Future]] | None:
        first = self._queue.get()
        if first is None:
            return None
        jobs, n = [first], len(first[0])
        while n < self._max:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is None:  # closing: serve what was taken, then stop
                self._queue.put(None)
                break
            jobs.append(job)
            n += len(job[0])
        return jobs

    def _loop(self) -> None:
        while True:
            jobs = self._take()
            if jobs is None:
                return
            texts = [t for job, _ in jobs for t in job]
            budget.fair_threads()  # this worker's torch threads: its share of the cores, as a request's
            try:
                rows = self._run(texts)
            except BaseException as exc:  # every caller of this forward gets the error
                for _, done in jobs:
                    done.set_exception(exc)
                continue
            with self._lock:
                self.forwards += 1
                self.requests += len(jobs)
                self.largest = max(self.largest, len(jobs))
            start = 0
            for job, done in jobs:
                done.set_result(rows[start:start + len(job)])
                start += len(job)


_COALESCERS: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def coalescer_for(model, key: tuple, make_run: Callable[[object], RunBatch], max_texts: int) -> Coalescer:
    """The coalescer of (`model`, `key`). It holds the model weakly: an evicted model is freed,
    and its worker thread ends with it."""
    with _REGISTRY_LOCK:
        per_model = _COALESCERS.setdefault(model, {})
        found = per_model.get(key)
        if found is None:
            ref = weakref.ref(model)

            def run(texts: list[str]) -> np.ndarray:
                m = ref()
                if m is None:
                    raise RuntimeError("The model was unloaded; send the request again.")
                return make_run(m)(texts)

            found = per_model[key] = Coalescer(run, max_texts, name=f"tlab-batch-{type(model).__name__}")
            weakref.finalize(model, found.close)
        return found


def enabled() -> bool:
    """Batching is on unless TLAB_BATCH_MAX=1, or on ZeroGPU (nothing to share there)."""
    return get_settings().batch_max > 1 and not on_zerogpu()


def stats() -> list[dict]:
    """Forwards and requests per live coalescer (bench/load.py reports them)."""
    with _REGISTRY_LOCK:
        found = [c for per_model in list(_COALESCERS.values()) for c in per_model.values()]
    return [{"forwards": c.forwards, "requests": c.requests, "largest": c.largest} for c in found]
