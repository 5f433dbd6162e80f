"""`/multilingual_ner_train`: a learner's own run of chapter 4's experiment, live.

The default run (German only, all four languages) is built at set-up; here the learner picks the
training languages and the steps, and watches the run: the default run's recipe and code
(`transfer_recipe.learner_run`: the embeddings and the lower layers frozen, the top layers and a token
head learning), then entity F1 on every language's test set, in the shape the default run's table has,
so the tab shows it with the same table and plot. Nothing is saved: the result is the table.

The Train tab's NER run is the pattern (backend/train/ner_api.py, ner_gpu.py): the model work is one
stateless GPU task that streams its steps from a thread (ZeroGPU runs it in a worker; only arguments
and yielded values cross), a session's run is marked in a store of the one kind (trained_store: one run
per session, its Stop flag, the client's share), the flag reaches the run by name (`stops.named`), and a
stop keeps what was trained so far, which is still scored. The request's budget stops it the same way,
early enough to leave the scoring its time.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Iterator

from backend.engines.ner import languages as ner_languages, transfer_recipe
from backend.hub import multilingual_runs
from backend.multilingual.api import shaped
from backend.runtime import budget as request_budget, config, stops, thread_stream
from backend.runtime.device import gpu_task
from backend.runtime.singleton import ProcessWide
from backend.runtime.trained_store import TrainedStore

MAX_STEPS = transfer_recipe.MAX_LEARNER_STEPS
DEFAULT_STEPS = dict(transfer_recipe.STEPS)  # the default run's steps per run ("de", "all"), for comparison
RUN = transfer_recipe.LEARNER_RUN
SCORING_RESERVE_S = 25.0  # the budget left for scoring every test set (~15 s here) when training stops for time


class LearnerStore(TrainedStore):
    """Whose learner's run is going: one per session, its Stop flag. It keeps no model (the run's table
    is its result), so it holds no memory; a client's sessions still count against its share."""

    NOUN = "multilingual run"
    ROOM = "room for multilingual runs"
    NO_ID = "No session id: your own multilingual run is kept per browser session; reload the page."

    def begin(self, session_id: str):
        return self._begin(session_id, 0, "Your own multilingual run is already going in this session: wait for "
                           "it, or press Stop.")

    def _gone_message(self, session_id: str) -> str | None:
        return None

    def _missing_message(self) -> str:
        return "A multilingual run keeps no model: its result is the table it returned."


STORE = ProcessWide(lambda: LearnerStore(idle_s=3600.0, max_sessions=256, max_bytes=1 << 20, describe=lambda s: "run",
                                         **config.store_settings()))


def get_store() -> LearnerStore:
    return STORE.get()


def stop(session_id: str, wait_s: float = 0.0) -> dict:
    """Ask the session's run to stop before its next step (what it trained is scored and shown). `wait_s`:
    wait that long for it to end; "ended": it has, its result is out."""
    stopping = get_store().request_stop(session_id)
    return {"stopping": stopping, "ended": stopping and get_store().wait_ended(session_id, wait_s)}


def _work(base, languages, steps, b, flag: threading.Event, q: queue.Queue, stop_key: str | None) -> None:
    """The training thread: the run under the request's budget; its events into `q`."""
    why: list[str] = []

    def should_stop() -> bool:
        if flag.is_set() or stops.asked(stop_key):
            why[:] = ["you"]
        elif b.remaining() < SCORING_RESERVE_S:
            why[:] = ["the time budget"]
        return bool(why)

    def on_step(done: int, total: int, loss: float) -> None:
        q.put({"event": "step", "step": done, "total_steps": total, "loss": round(loss, 4)})
        if done == total:
            q.put({"event": "scoring"})

    try:
        with request_budget.scope(budget=b):
            raw = transfer_recipe.learner_run(base, languages, steps, on_step, should_stop)
        q.put({"event": "trained", "raw": raw, "stopped_by": why[0] if why else None})
    except BaseException as exc:  # noqa: BLE001  (re-raised in the stream, in the caller's thread)
        q.put({"event": "error", "error": exc})
    finally:
        q.put(None)


@gpu_task(duration=180)
def run_stream(languages: tuple, steps: int, seconds: float, stop_key: str | None = None) -> Iterator[dict]:
    """The learner's run as a stream: {"event": "step", step, total_steps, loss} per step, {"event": "scoring"},
    then {"event": "trained", "raw": results.json's shape, "stopped_by"}. Errors are raised here."""
    from backend import hub

    base = hub.load("multilingual")
    multilingual_runs.check_base(base)
    b = request_budget.current() or request_budget.Budget(seconds)
    flag = threading.Event()  # also set when the caller closes the stream: the thread ends before its next step
    yield from thread_stream.relay(lambda q: _work(base, languages, steps, b, flag, q, stop_key), flag,
                                   "ml-learner-run")


def _limit_s() -> float:
    b = request_budget.current()
    return b.remaining() if b is not None else max(60.0, request_budget.default_seconds())


def result(raw: dict, stopped_by: str | None, seconds: float) -> dict:
    """The run in the default run's result shape (`api.shaped`) plus "learner": what was chosen and done."""
    meta = raw["runs"][RUN]["meta"]
    names = ", ".join(ner_languages.LANGUAGE_NAMES[l] for l in meta["train_languages"])
    out = shaped(raw, {RUN: f"your run: {names}"})
    out["learner"] = {"languages": meta["train_languages"], "steps": meta["total_steps"], "steps_done": meta["steps"],
                      "stopped": bool(meta["stopped"]), "stopped_by": stopped_by if meta["stopped"] else None,
                      "frozen": meta["frozen"], "trained": meta["trained"], "seconds": round(seconds, 2),
                      "step_s": meta["step_s"], "max_steps": MAX_STEPS}
    return out


def train_iter(session_id: str, languages=("de",), steps: int = 20) -> Iterator[dict]:
    """The learner's run: {"event": "plan"}, a {"event": "step"} per step, {"event": "scoring"}, then
    {"event": "done", "result"} (`result`; "learner"."stopped" when Stop or the budget ended it early)."""
    t0 = time.perf_counter()
    languages, steps = transfer_recipe.check_learner(languages, steps)  # refused before any model loads
    store = get_store()
    session = store.begin(session_id)
    try:
        yield {"event": "plan", "languages": list(languages), "steps": steps}
        with stops.named(session.stop) as stop_key:
            for ev in run_stream(languages, steps, _limit_s(), stop_key):
                if ev["event"] == "trained":
                    yield {"event": "done", "result": result(ev["raw"], ev["stopped_by"], time.perf_counter() - t0)}
                    return
                yield ev
    finally:
        store.end(session_id, None)


def train(session_id: str, languages=("de",), steps: int = 20) -> dict:
    """`train_iter` run to the end -> its result."""
    out = None
    for ev in train_iter(session_id, languages, steps):
        if ev["event"] == "done":
            out = ev["result"]
    return out
