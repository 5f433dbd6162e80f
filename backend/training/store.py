"""Trained classifiers per session, bounded like the search indexes: idle eviction, a session
cap and a memory budget for all sessions together (TLAB_TRAIN_SESSION_MB, default 1024).

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

from backend import config
from backend.errors import InputError


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


class TrainStore:
    def __init__(self, idle_s: float = 3600.0, max_sessions: int = 32, max_bytes: int | None = None):
        self.idle_s = idle_s
        self.max_sessions = max_sessions
        self.max_bytes = _budget_bytes() if max_bytes is None else max_bytes
        self._sessions: dict[str, Session] = {}
        self._lock = threading.RLock()

    def session(self, session_id: str) -> Session:
        if not session_id or not isinstance(session_id, str):
            raise InputError("No session id: trained models are kept per session.")
        with self._lock:
            s = self._sessions.get(session_id)
            if s is None:
                s = self._sessions[session_id] = Session()
            s.last_used = time.monotonic()
            self.evict(keep=session_id)
            return s

    def begin(self, session_id: str) -> Session:
        """Mark a run as started (one at a time per session) and clear its stop flag."""
        with self._lock:
            s = self.session(session_id)
            if s.running:
                raise InputError("A training run is already going in this session: wait for it, "
                                 "or press Stop.")
            s.running = True
            s.stop.clear()
            return s

    def end(self, session_id: str, trained: Trained | None) -> None:
        with self._lock:
            s = self._sessions.get(session_id)
            if s is None:  # evicted while it ran: keep the result anyway
                s = self._sessions[session_id] = Session()
            s.running = False
            if trained is not None:
                s.trained = trained
                s.use_in_pipelines = None  # a new model: Pipelines goes back to the profile's until asked
                s.forget_files()
            s.last_used = time.monotonic()
            self.evict(keep=session_id)

    def request_stop(self, session_id: str) -> bool:
        """Set the session's stop flag; True if a run was going."""
        with self._lock:
            s = self._sessions.get(session_id)
            if s is None:
                return False
            s.stop.set()
            return s.running

    def trained(self, session_id: str) -> Trained:
        t = self.session(session_id).trained
        if t is None:
            raise InputError("No trained model in this session yet: build one first by training "
                             "(the Train tab, or /train with the same client).")
        return t

    def peek(self, session_id: str) -> Session | None:
        """The session if it exists (never creates one, never evicts)."""
        with self._lock:
            return self._sessions.get(session_id)

    def files_dir(self, session_id: str, root: str | Path | None = None) -> Path:
        """The session's private temp folder (under `root`, e.g. the web server's file cache, so
        the file it serves is this one and not a copy), made on first use; deleted with the session."""
        with self._lock:
            s = self.session(session_id)
            if s.files is None or not s.files.is_dir():
                if root is not None:
                    Path(root).mkdir(parents=True, exist_ok=True)
                s.files = Path(tempfile.mkdtemp(prefix="tlab-train-", dir=root))
            return s.files

    def drop(self, session_id: str) -> None:
        with self._lock:
            s = self._sessions.pop(session_id, None)
            if s is not None:
                s.stop.set()
                s.forget_files()

    def bytes_used(self) -> int:
        with self._lock:
            return sum(s.trained.nbytes for s in self._sessions.values() if s.trained is not None)

    def evict(self, keep: str | None = None, now: float | None = None) -> list[str]:
        """Idle sessions, then the oldest beyond max_sessions, then the least recently used
        trained models while all of them together exceed the memory budget (never `keep`,
        never a running session)."""
        now = time.monotonic() if now is None else now
        gone = []
        with self._lock:
            for sid, s in list(self._sessions.items()):
                if sid != keep and not s.running and now - s.last_used > self.idle_s:
                    gone.append(sid)
                    del self._sessions[sid]
                    s.forget_files()
            by_age = sorted((sid for sid, s in self._sessions.items() if sid != keep and not s.running),
                            key=lambda sid: self._sessions[sid].last_used)
            while len(self._sessions) > self.max_sessions and by_age:
                sid = by_age.pop(0)
                gone.append(sid)
                self._sessions.pop(sid).forget_files()
            while self.bytes_used() > self.max_bytes and by_age:
                sid = by_age.pop(0)
                if self._sessions[sid].trained is not None:
                    self._sessions[sid].trained = None
                    self._sessions[sid].forget_files()
                    gone.append(sid)
        return gone

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._sessions


_STORE: TrainStore | None = None
_STORE_LOCK = threading.Lock()


def get_store() -> TrainStore:
    global _STORE
    with _STORE_LOCK:
        if _STORE is None:
            _STORE = TrainStore()
        return _STORE
