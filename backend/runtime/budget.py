"""A time budget and a stop flag per request: how long model work stops cooperatively.

The app opens one `Budget` per request (components.shell runs every handler inside
`scope()`); a cancel from the browser or the client sets its stop flag. Backend loops call
`check()` between steps (tokens, batches, windows, chunks), so a job stops within one step of
its deadline or of a cancel. With no budget open (a script, a test) `check()` does nothing.

    with budget.scope() as b:          # reuses the request's budget if one is open
        for batch in batches:
            budget.check("embedded 512 of 20,000 passages")   # raises BudgetExceeded / Cancelled
    b.cancel()                          # from another thread: stop at the next check

`BudgetExceeded` and `Cancelled` are `LabError`s: the UI shows their message as is.
Generation does not raise: its stopping criterion ends the text and the result says
finish_reason "time budget" (see backend.engines.generation.generate).

Jobs at once (in one lane or several) on a small CPU: each job's torch work gets its share of the
cores (`fair_threads`, applied at every check), so two jobs never run 2x the cores' threads.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import sys
import threading
import time
from collections.abc import Iterator

from backend.runtime import memory, memory_budget
from backend.runtime import env
from backend.runtime.errors import LabError

DEFAULT_SECONDS = 120.0


class BudgetExceeded(LabError):
    """The request used up its time budget; the message says what was done and what to ask for."""


class Cancelled(LabError):
    """The caller cancelled the request (Stop button, closed page, `job.cancel()`)."""


class MemoryExceeded(LabError):
    """The process grew past the request's memory guard while it ran (backend/runtime/memory_budget.py)."""


def default_seconds() -> float:
    """TLAB_TIME_BUDGET_S (config.Settings.time_budget_s); 0 or less means no limit."""
    from backend.runtime.config import get_settings

    return float(getattr(get_settings(), "time_budget_s", DEFAULT_SECONDS))


class Budget:
    """A deadline plus a stop flag, shared by everything one request runs."""

    def __init__(self, seconds: float | None = None, stop: threading.Event | None = None):
        self.seconds = default_seconds() if seconds is None else float(seconds)
        if math.isnan(self.seconds):
            self.seconds = DEFAULT_SECONDS
        self.started = time.monotonic()
        self.deadline = self.started + self.seconds if self.seconds > 0 else math.inf
        self.stop = stop if stop is not None else threading.Event()
        self._rss_start = memory.rss_mb()
        self._over_memory = False

    # ------------------------------------------------------------ state
    def restart(self) -> None:
        """Start the clock now (after waiting for a lane: the budget counts the work, not the wait)."""
        self.started = time.monotonic()
        self._rss_start = memory.rss_mb()
        self.deadline = self.started + self.seconds if self.seconds > 0 else math.inf

    def cancel(self) -> None:
        """Ask the work to stop at its next check (thread-safe)."""
        self.stop.set()

    @property
    def cancelled(self) -> bool:
        return self.stop.is_set()

    @property
    def timed_out(self) -> bool:
        return time.monotonic() >= self.deadline

    def expired(self) -> bool:
        """True once cancelled, past the deadline or past the memory guard: time to stop."""
        return self.stop.is_set() or time.monotonic() >= self.deadline or self.over_memory()

    def over_memory(self) -> bool:
        """Has this process grown by more than GUARD_FACTOR request shares since the work started?
        (An estimate refused the runs it knows to be too big; this stops one it got wrong. Sticky:
        once over, the request stops even if the memory comes back.)"""
        if not self._over_memory and self._rss_start is not None:
            now = memory.rss_mb()
            limit = memory_budget.GUARD_FACTOR * memory_budget.share_mb()
            self._over_memory = now is not None and now - self._rss_start > limit
        return self._over_memory

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    @property
    def finish_reason(self) -> str | None:
        """What generation reports when it stopped early: "stopped" (cancel) or "time budget"."""
        if self.stop.is_set():
            return "stopped"
        if self.timed_out:
            return "time budget"
        if self._over_memory:
            return "memory budget"
        return None

    # ------------------------------------------------------------ checks
    def check(self, done: str = "", ask: str = "") -> None:
        """Raise Cancelled / BudgetExceeded when it is time to stop; else rebalance threads.

        `done`: what was finished so far ("embedded 5,120 of 177,000 passages"); `ask`: how to
        ask for less ("upload fewer passages"). Both go into the message.
        """
        if self.stop.is_set():
            raise Cancelled("The request was cancelled" + (f" ({done})" if done else "") + ".")
        if time.monotonic() >= self.deadline:
            raise BudgetExceeded(self.message(done, ask))
        if self.over_memory():
            raise MemoryExceeded(
                f"Stopped: this process grew by more than {memory_budget.GUARD_FACTOR * memory_budget.share_mb():,.0f} MB "
                f"while the request ran ({memory_budget.GUARD_FACTOR:g} x the {memory_budget.share_mb():,.0f} MB each "
                "request may hold, TLAB_REQUEST_MEMORY_MB)." + (f" Done so far: {done}." if done else "")
                + " Ask for less work in one request (shorter input, fewer tokens or beams).")
        fair_threads()

    def message(self, done: str = "", ask: str = "") -> str:
        parts = [f"Stopped after {self.elapsed():.0f} s: each request on this server has a time budget of "
                 f"{self.seconds:g} s (TLAB_TIME_BUDGET_S)."]
        if done:
            parts.append(f"Done so far: {done}.")
        parts.append(ask or "Ask for less work in one request (shorter input, fewer tokens or beams, a smaller "
                            "corpus), or run the app yourself with a larger TLAB_TIME_BUDGET_S.")
        return " ".join(parts)


# ---------------------------------------------------------------- the request's budget

_CURRENT: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("tlab_budget", default=None)
_ACTIVE: set[int] = set()  # ids of the budgets whose scope is open: jobs running now
_ACTIVE_LOCK = threading.Lock()


def current() -> Budget | None:
    """The budget of the request running in this context (None in a script or a test)."""
    return _CURRENT.get()


@contextlib.contextmanager
def scope(seconds: float | None = None, budget: Budget | None = None) -> Iterator[Budget]:
    """Run a block under a budget: the one given, the one already open, or a new one.

    Nested scopes share the outermost budget, so an entry point that opens one inside a
    request handler's scope adds no second deadline.
    """
    outer = _CURRENT.get()
    if budget is None and outer is not None:
        yield outer
        return
    b = budget if budget is not None else Budget(seconds)
    token = _CURRENT.set(b)
    with _ACTIVE_LOCK:
        _ACTIVE.add(id(b))
    try:
        yield b
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE.discard(id(b))
        _CURRENT.reset(token)


@contextlib.contextmanager
def detached() -> Iterator[None]:
    """Run a block outside the request's budget: work that must finish whatever the request
    does (a model built once into the cache), so neither its deadline nor a cancel cuts it short."""
    token = _CURRENT.set(None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def check(done: str = "", ask: str = "") -> None:
    """`Budget.check` on the current budget; nothing when none is open."""
    b = _CURRENT.get()
    if b is not None:
        b.check(done, ask)


def expired() -> bool:
    b = _CURRENT.get()
    return b is not None and b.expired()


def active_jobs() -> int:
    with _ACTIVE_LOCK:
        return len(_ACTIVE)


# ---------------------------------------------------------------- fair CPU threads

def _cores() -> int:
    """The cores one job's torch team may use when it runs alone. OMP_NUM_THREADS, where the operator set
    it: the standard knob, which torch reads at start and `fair_threads` would otherwise set back to every
    core. Else the CPUs this process may run on (a container's cpuset, a `taskset`), not every CPU the
    machine has."""
    raw = os.environ.get("OMP_NUM_THREADS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


_CORES = _cores()
_thread_state = threading.local()


def fair_share(jobs: int, cores: int = _CORES) -> int:
    """torch threads for one of `jobs` concurrent jobs on `cores` cores (at least 1)."""
    return max(1, cores // max(1, jobs))


# A generation server on this machine (a loopback TLAB_GENERATION_URL) keeps the cores busy while it
# generates: vLLM's CPU backend runs its worker on one and its engine-core loop on another. An OpenMP
# team of 2 threads here then waits at every barrier for a core the server holds: /classify took
# 1.1 s (p50) beside one server decode with 2 threads, 0.17 s with 1 (0.08 s with the server idle).
# So while this app streams from a local server, each job here gets one torch thread.
_LOCAL_SERVER_STREAMS = 0
_LOCAL_SERVER_LOCK = threading.Lock()


@contextlib.contextmanager
def local_server_generating(local: bool) -> Iterator[None]:
    """Around a stream from the generation server; `local`: it runs on this machine's cores."""
    global _LOCAL_SERVER_STREAMS
    if not local:
        yield
        return
    with _LOCAL_SERVER_LOCK:
        _LOCAL_SERVER_STREAMS += 1
    try:
        yield
    finally:
        with _LOCAL_SERVER_LOCK:
            _LOCAL_SERVER_STREAMS -= 1


def fair_threads() -> None:
    """Give this thread's torch ops cores / (jobs running now) threads; one while a local
    generation server generates (above).

    torch's OpenMP thread count is per calling thread, so each job sets its own; only a
    change is applied (a check costs a set lookup). Skipped when torch is not loaded or on
    a GPU box (TLAB_FAIR_THREADS=0 turns it off).
    """
    torch = sys.modules.get("torch")
    if torch is None or env.read("TLAB_FAIR_THREADS") == "0" or getattr(_thread_state, "pinned", False):
        return
    want = 1 if _LOCAL_SERVER_STREAMS else fair_share(active_jobs())
    if getattr(_thread_state, "threads", None) != want:
        torch.set_num_threads(want)
        _thread_state.threads = want


@contextlib.contextmanager
def one_order_of_sums() -> Iterator[None]:
    """Run the block's torch work on one thread, whatever else runs: for numbers shown to 3 digits.

    A float sum split over 2 threads is added in another order than on 1, so a check that prints
    "max |ours - model's| = 4.17e-06 at layer 5" printed 4.29e-06 at layer 4 for the same example
    when another job ran beside it (`fair_threads` had given it 1 thread instead of 2). Inside this
    block the count stays 1 (`fair_threads` leaves a pinned thread alone), so the digits are a
    property of the input, not of the load. Worth it only for small work (a 6-layer pass over a
    sentence takes milliseconds either way).
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before, was_pinned = torch.get_num_threads(), getattr(_thread_state, "pinned", False)
    _thread_state.pinned = True
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
        _thread_state.pinned = was_pinned
