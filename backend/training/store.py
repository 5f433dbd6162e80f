"""Trained classifiers per session, bounded like the search indexes: idle eviction, a session
cap and a memory budget for all sessions together (TLAB_TRAIN_SESSION_MB, default 1024), shared
fairly (backend/runtime/sessions.py): a model used in the last `keep_s` (TLAB_KEEP_ITEMS_S) is
never evicted for a newcomer; a run starts only when a model's room can be found, else it is
refused at once; a visitor whose model was evicted is told why.

A session holds its last training result: the fitted probe (tiny numpy arrays) and the
fine-tuned weights (about 90 MB for MiniLM), a stop flag that the Stop button sets, whether
its Pipelines' Classify uses the trained model, and a private temp folder for downloads that
is deleted with the session. Everything lives in the app's process (ZeroGPU workers keep nothing).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.runtime.client_store import ClientStore
from backend.runtime import clients, config, memory
from backend.runtime.singleton import ProcessWide
from backend.runtime.errors import InputError

MODEL_BYTES_GUESS = 100 * 1024 * 1024  # a fine-tuned MiniLM (~90 MB): the room a run must find before it starts


@dataclass
class Trained:
    """One session's classifier(s), what they were trained on and how they scored."""

    labels: list[str]
    dataset: dict
    checkpoint: str
    override: str | None
    probe: Any = None  # probe.Probe
    weights: dict | None = None  # fine-tuned state_dict (CPU tensors)
    scores: dict = field(default_factory=dict)  # method -> test report summary
    best: str | None = None
    created: float = field(default_factory=time.time)

    @property
    def nbytes(self) -> int:
        n = self.probe.nbytes if self.probe is not None else 0
        if self.weights:
            n += sum(int(v.numel() * v.element_size()) for v in self.weights.values())
        return n

    def methods(self) -> list[str]:
        return [m for m, ok in (("probe", self.probe is not None), ("finetune", self.weights is not None)) if ok]


@dataclass
class Session:
    trained: Trained | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    running: bool = False
    last_used: float = field(default_factory=time.monotonic)
    use_in_pipelines: str | None = None  # the trained method Pipelines' Classify uses, None = the profile's
    files: Path | None = None  # private temp folder (downloads), deleted with the session

    def forget_files(self) -> None:
        if self.files is not None:
            shutil.rmtree(self.files, ignore_errors=True)
            self.files = None


def _budget_bytes() -> int:
    return int(config.get_settings().train_session_mb * 1024 * 1024)


def _describe(s: Session) -> str:
    """The model, in words, for the message its session gets if it is evicted."""
    t = s.trained
    if t is None:
        return "model"
    what = "token classifier (NER)" if getattr(t, "task", None) == "ner" else "classifier"
    return f"{what} trained on '{t.dataset.get('name', '?')}'"


def _forget_model(s: Session) -> bool:
    """Memory pressure: a session loses its trained model (and its files), not its place."""
    if s.trained is None:
        return False
    s.trained = None
    s.forget_files()
    return True


class TrainStore:
    """The sessions of the Train tab, bounded by the one `SessionStore`."""

    def __init__(self, idle_s: float = 3600.0, max_sessions: int = 32, max_bytes: int | None = None,
                 keep_s: float = 0.0, share: float = 1.0, max_age_s: float | None = None):
        self._sessions: ClientStore[Session] = ClientStore(
            Session, share=share, max_age_s=max_age_s, idle_s=idle_s, max_entries=max_sessions,
            max_bytes=_budget_bytes() if max_bytes is None else max_bytes,
            size_of=lambda s: s.trained.nbytes if s.trained is not None else 0,
            busy=lambda s: s.running, release=Session.forget_files, shrink=_forget_model,
            keep_s=keep_s, describe=_describe)
        self._lock = self._sessions.lock

    @property
    def max_bytes(self) -> int | None:
        return self._sessions.max_bytes

    def session(self, session_id: str) -> Session:
        if not session_id or not isinstance(session_id, str):
            raise InputError("No session id: trained models are kept per session.")
        s = self._sessions.get(session_id)
        s.last_used = time.monotonic()
        return s

    def begin(self, session_id: str) -> Session:
        """Mark a run as started (one at a time per session) and clear its stop flag."""
        with self._lock:
            s = self.session(session_id)
            if s.running:
                raise InputError("A training run is already going in this session: wait for it, "
                                 "or press Stop.")
            guess = min(MODEL_BYTES_GUESS, (self.max_bytes or 8 * MODEL_BYTES_GUESS) // 8)  # small test budgets
            refusal = self._sessions.client_refusal(session_id, guess, "trained model", "the memory for trained models")
            if refusal is not None:
                raise InputError(refusal)
            if not self._sessions.could_fit(session_id, guess):
                raise InputError(self._sessions.full_message(session_id, "trained model",
                                                             "memory for trained models"))
            s.running = True
            s.stop.clear()
            return s

    def end(self, session_id: str, trained: Trained | None) -> None:
        with self._lock:
            s = self._sessions.get(session_id)  # evicted while it ran: a new one keeps the result anyway
            s.running = False
            if trained is not None:
                self._sessions.forget_gone(session_id)
                self._sessions.renew(session_id)  # a new model: its reservation's age starts now
                s.trained = trained
                s.use_in_pipelines = None  # a new model: Pipelines goes back to the profile's until asked
                s.forget_files()
            self._sessions.get(session_id)  # evict again, now that the result counts
        memory.give_back()  # the run's thread freed its blocks into its malloc arena: return them

    def request_stop(self, session_id: str) -> bool:
        """Set the session's stop flag; True if a run was going."""
        with self._lock:
            s = self._sessions.peek(session_id)
            if s is None:
                return False
            s.stop.set()
            return s.running

    def wait_ended(self, session_id: str, wait_s: float) -> bool:
        """Wait up to `wait_s` for the session's run to end -> has it? (Its last result is out by then.)"""
        return not session_id or self._sessions.wait_idle(session_id, wait_s)

    def trained(self, session_id: str) -> Trained:
        """The session's model (marked used); never makes a session, so asking evicts nobody."""
        if not session_id or not isinstance(session_id, str):
            raise InputError("No session id: trained models are kept per session.")
        s = self._sessions.peek(session_id)
        if s is None or s.trained is None:
            raise InputError(self._gone_message(session_id) or
                             "No trained model in this session yet: build one first by training "
                             "(the Train tab, or /train with the same client).")
        self._sessions.touch(session_id)
        s.last_used = time.monotonic()
        return s.trained

    def _gone_message(self, session_id: str) -> str | None:
        found = self._sessions.why_gone(session_id)
        if found is None or self._sessions.peek(session_id) is not None and self._sessions.peek(session_id).running:
            return None
        why = (f"after {self._sessions.idle_s / 60:.0f} minutes unused" if found[0] == "idle" else
               "to make room for other visitors (the server keeps the models used most recently)")
        return (f"No trained model in this session now: your {found[1] or 'model'} was removed {why}. "
                "Train it again (the Train tab, or /train with the same client).")

    def peek(self, session_id: str) -> Session | None:
        """The session if it exists (never creates one, never evicts)."""
        return self._sessions.peek(session_id)

    def files_dir(self, session_id: str, root: str | Path | None = None) -> Path:
        """The session's private temp folder (under `root`, e.g. the web server's file cache, so
        the file it serves is this one and not a copy), made on first use; deleted with the session."""
        with self._lock:
            s = self.session(session_id)
            if s.files is None or not s.files.is_dir():
                if root is not None:
                    Path(root).mkdir(parents=True, exist_ok=True)
                s.files = Path(tempfile.mkdtemp(prefix="tlab-train-", dir=root))
                clients.own(s.files, session_id)  # its zip is served to this client only
            return s.files

    def drop(self, session_id: str) -> None:
        s = self._sessions.drop(session_id)
        if s is not None:
            s.stop.set()
            del s
            memory.give_back()  # a model's small blocks sat in malloc arenas after its page closed

    def bytes_used(self) -> int:
        return self._sessions.total_bytes()

    def evict(self, keep: str | None = None, now: float | None = None) -> list[str]:
        """Idle sessions, then the oldest beyond max_sessions, then the least recently used
        trained models while all of them together exceed the memory budget (never `keep`,
        never a running session)."""
        return self._sessions.evict(keep=keep, now=now)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._sessions


STORE = ProcessWide(lambda: TrainStore(**config.store_settings()))


def get_store() -> TrainStore:
    return STORE.get()
