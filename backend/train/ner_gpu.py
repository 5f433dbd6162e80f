"""The NER task's model calls, as stateless GPU tasks (ZeroGPU runs each in a worker process and
only arguments and yielded values cross): a training run that streams its steps, and prediction
with a session's weights passed in.

The server's `train` runs all its steps in one call and reports each step to a callback. The
stream runs it in a thread and yields those reports as they come, so the page shows progress
per step. Stop: `halt(run_id)` sets the run's flag (in this process), and the session's own flag
reaches the run by name (`stop_key`, backend/runtime/stops.py) while no event is coming (a validation
or scoring pass); either ends the run before its next step or batch of a pass. In a
ZeroGPU worker, where neither can reach, closing the stream ends it. The run's
deadline is the request's budget, or `seconds` where no budget crossed (a ZeroGPU worker).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Iterator

from backend import hub
from backend.engines.ner import token_classification as tc
from backend.runtime import budget as request_budget
from backend.runtime import stops, thread_stream
from backend.runtime.device import gpu_task
from backend.train.gpu import ROLE

_HALTS: dict[str, threading.Event] = {}
_LOCK = threading.Lock()


class _Halted(Exception):
    """Raised in the training thread's step callback when the run was asked to stop."""


def halt(run_id: str) -> bool:
    """Ask the run `run_id` to stop after its current step; True if it was running here."""
    with _LOCK:
        flag = _HALTS.get(run_id)
    if flag is not None:
        flag.set()
    return flag is not None


def build(lm, labels: list[str], recipe: tc.Recipe, weights: dict | None = None) -> tc.TokenClassifier:
    """A token classifier over a copy of the embedder (seeded head, or `weights` loaded), on its device."""
    model = tc.new_model(lm.model, len(labels), recipe.seed, recipe.dropout, recipe.shape_dim, recipe.shape_input)
    if weights is not None:
        model.load_state_dict(weights)
    return model.to(getattr(lm, "device", None) or "cpu").eval()


def _score(model, tokenizer, data: dict, labels: list[str], recipe: tc.Recipe, should_stop=None) -> dict:
    """The best state evaluated on validation and test (predictions, per-sentence losses, reports)."""
    t0 = time.perf_counter()
    out = {split: tc.evaluate(model, tokenizer, data[split], labels, recipe.max_length, should_stop)
           for split in ("validation", "test")}
    out["score_s"] = time.perf_counter() - t0
    return out


def _work(model, tokenizer, data: dict, labels, recipe, b, flag: threading.Event, q: queue.Queue,
          stop_key: str | None = None) -> None:
    """The training thread: the server's loop under the run's budget, then scoring; events into `q`."""
    def should_stop() -> bool:
        return flag.is_set() or stops.asked(stop_key)

    def on_step(done: int, total: int, loss: float) -> None:
        q.put({"event": "step", "step": done, "total_steps": total, "loss": round(loss, 4)})
        if should_stop() and done < total:
            raise _Halted

    try:
        with request_budget.scope(budget=b):
            out = tc.train(model, tokenizer, data["train"], data["validation"], labels, recipe, on_step,
                           should_stop=should_stop)
            q.put({"event": "scoring"})
            scored = _score(model, tokenizer, data, labels, recipe, should_stop)
        q.put({"event": "trained", "weights": out.weights, "steps": out.steps, "total_steps": out.total_steps,
               "best_step": out.best_step, "best_validation": out.best_val, "seconds": out.seconds,
               "step_seconds": out.step_seconds, "losses": out.losses, "evals": out.evals, **scored})
    except (_Halted, tc.Stopped):
        q.put({"event": "stopped"})
    except BaseException as exc:  # noqa: BLE001  (re-raised in the stream, in the caller's thread)
        q.put({"event": "error", "error": exc})
    finally:
        q.put(None)


@gpu_task(duration=240)
def train_stream(run_id: str, override: str | None, data: dict, labels: list[str], recipe: tc.Recipe,
                 seconds: float, stop_key: str | None = None) -> Iterator[dict]:
    """Train a token classifier on `data` ({"train", "validation", "test"}: lists of Sentence) by
    `recipe`: yields {"event": "step"} per step, then {"event": "trained", weights, ...} or
    {"event": "stopped"}. Errors (the budget's included) are raised here."""
    lm = hub.load(ROLE, override)
    b = request_budget.current() or request_budget.Budget(seconds)
    flag = threading.Event()
    with _LOCK:
        _HALTS[run_id] = flag
    model = build(lm, labels, recipe)
    try:  # closing the stream sets the flag: the thread ends at its next step
        yield from thread_stream.relay(
            lambda q: _work(model, lm.tokenizer, data, labels, recipe, b, flag, q, stop_key), flag,
            f"ner-train-{run_id[:8]}")
    finally:
        with _LOCK:
            _HALTS.pop(run_id, None)


@gpu_task(duration=60)
def predict(override: str | None, weights: dict, labels: list[str], recipe: tc.Recipe,
            sentences: list[list[str]]) -> list[dict]:
    """Tags and scored entities for pre-split sentences under a session's trained weights."""
    lm = hub.load(ROLE, override)
    return tc.predict(build(lm, labels, recipe, weights), lm.tokenizer, sentences, labels, recipe.max_length)
