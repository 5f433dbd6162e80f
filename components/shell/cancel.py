"""Every request's time budget and stop flag, watched for a cancel, and the wrapper every handler
runs in (`user_errors`): a LabError becomes one readable message, long work takes its slot."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading

from backend.runtime import budget, memory
from backend.runtime.errors import LabError
from components.shell import gradio_patches
from components.shell.errors import readable_error
from components.shell import plans
from components.shell.lanes import CANCEL_POLL_S, _lane_slot

# ---------------------------------------------------------------- budget and cancel
# A cancel (the Stop button, `job.cancel()` from gradio_client, a closed page) cancels the
# event's asyncio task; a sync handler's worker thread is not told. Gradio forgets a cancelled
# event at once (the queue's event table loses its id, a closed session sets
# `Event.alive = False`), so a watcher thread polls that and sets the request's stop flag;
# the backend's checks then end the work within one step.
_WATCHED: dict[int, tuple[budget.Budget, object, str, object]] = {}
_WATCH_LOCK = threading.Lock()
_WATCHER: threading.Thread | None = None


def _watch() -> None:
    import time

    while True:
        time.sleep(CANCEL_POLL_S)
        with _WATCH_LOCK:
            watched = list(_WATCHED.values())
        for b, queue, event_id, event in watched:
            if gradio_patches.event_gone(queue, event_id, event):
                b.cancel()


def _register(b: budget.Budget) -> str | None:
    """Watch this thread's event for a cancel -> the event's concurrency id (None: no event)."""
    global _WATCHER
    found = gradio_patches.current_event()
    if found is None:
        return None
    with _WATCH_LOCK:
        _WATCHED[id(b)] = (b, *found)
        if _WATCHER is None:
            _WATCHER = threading.Thread(target=_watch, name="tlab-cancel-watch", daemon=True)
            _WATCHER.start()
    return gradio_patches.lane_of(found[2]) or "?"


def _unregister(b: budget.Budget) -> None:
    with _WATCH_LOCK:
        _WATCHED.pop(id(b), None)


GREW_MB = 100  # a request that left the process this much bigger gives its freed memory back


@contextlib.contextmanager
def request_budget(args: tuple = (), owner=None):
    """The request's budget (deadline + stop flag), watched for a cancel while the handler runs;
    a long job first waits for the long lane's slot: every job of the long lane, and in the decode
    lane a request of an `owner` that leaves its slot to the shell (`plans.planned(shell_slot=True)`)
    whose plan is long."""
    with budget.scope() as b:
        lane = _register(b)
        before = memory.rss_mb()
        try:
            with _lane_slot(b, _takes_long_slot(lane, args, owner)):
                yield b
        finally:
            _unregister(b)
            after = memory.rss_mb()
            if lane == "long" or (before is not None and after is not None and after - before > GREW_MB):
                memory.give_back()  # the arenas a heavy request filled go back (4.0 GB at rest, not 1.0 GB)


def _takes_long_slot(lane: str | None, args: tuple, owner) -> bool:
    if lane == "long":
        return True
    if lane != "decode" or not getattr(owner, "shell_slot", False):
        return False
    plan = plans.admitted() or plans.plan_of(owner, args)
    return plan is not None and plan.long


def bounded_steps(gen, b: budget.Budget):
    """Drive a handler's generator one step at a time under budget `b` (each step may run in
    another worker thread, so the budget is entered per step); closing it stops the work."""
    watched = False
    slot = contextlib.ExitStack()
    try:
        while True:
            with budget.scope(budget=b):
                if not watched:
                    watched = True
                    slot.enter_context(_lane_slot(b, _register(b) == "long"))
                try:
                    item = next(gen)
                except StopIteration:
                    return
            yield item
    finally:
        _unregister(b)
        b.cancel()  # closed early (a cancel) or finished: nothing of it may keep running
        try:
            gen.close()
        finally:
            slot.close()  # the long lane's slot goes back whatever happened (it was lost once: a hang)


def user_errors(fn):
    """Show a LabError's message in the UI (gr.Error) instead of a traceback.

    The handler runs under its request's time budget, and a cancel stops it (see above).

    `functools.wraps` keeps the signature so Gradio still injects gr.Request / gr.Progress.
    """
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from bounded_steps(fn(*args, **kwargs), budget.Budget())
            except LabError as exc:
                raise readable_error(exc, fn.__name__) from None

        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with request_budget(args, wrapper):
                return fn(*args, **kwargs)
        except LabError as exc:
            raise readable_error(exc, fn.__name__) from None

    return wrapper
