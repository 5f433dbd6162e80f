"""The tiny GPTs trained in the From scratch tab, one per session, bounded by the one
`SessionStore` (backend/runtime/sessions.py), like the Train tab's models: idle eviction, a
session cap, a memory budget for all sessions together (TLAB_SCRATCH_GPT_MB, default 256: a
default tiny GPT is about 1.5 MB), a model used in the last `keep_s` (TLAB_KEEP_ITEMS_S) never
evicted for a newcomer, and a visitor whose model went is told why.

A session holds its model (CPU weights, dropped optimizer), its tokenizer, what the run
reported, a stop flag for the Stop button, and a private temp folder for the download that
is deleted with the session.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.runtime.client_store import ClientStore
from backend.runtime import clients, config, memory
from backend.runtime.errors import InputError
from backend.runtime.singleton import ProcessWide

BYTES_GUESS = 16 * 1024 * 1024  # the largest tiny GPT the limits allow is ~12 MB of float32 weights


@dataclass
class Model:
    model: Any  # GPT2LMHeadModel (CPU, eval mode)
    tokenizer: Any  # tokenizers.Tokenizer
    info: dict  # scheme, corpus, sizes, the run's numbers
    created: float = field(default_factory=time.time)
    # What the model box of Anatomy and Decoding takes for this model (hub.session_models): unguessable,
    # and it works only for requests from the address (the client) that trained it (`by_name`).
    name: str = field(default_factory=lambda: f"session:tinygpt-{secrets.token_urlsafe(12)}")
    hf_tokenizer: Any = field(default=None, repr=False)  # the transformers wrapper, made on first use

    @property
    def nbytes(self) -> int:
        return sum(int(p.numel() * p.element_size()) for p in self.model.parameters())


@dataclass
class Session:
    trained: Model | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    running: bool = False
    files: Path | None = None

    def forget_files(self) -> None:
        if self.files is not None:
            shutil.rmtree(self.files, ignore_errors=True)
            self.files = None


def _forget_model(s: Session) -> bool:
    if s.trained is None:
        return False
    s.trained = None
    s.forget_files()
    return True


def _describe(s: Session, noun: str = "tiny GPT") -> str:
    return f"{noun} trained on {s.trained.info.get('corpus', 'your text')}" if s.trained else noun


def _budget_bytes() -> int:
    return int(float(os.environ.get("TLAB_SCRATCH_GPT_MB", "256") or 256) * 1024 * 1024)


class GptStore:
    NOUN, TRAIN_HINT = "tiny GPT", "Train tiny GPT, or /train_gpt with the same client"  # a subclass names its own

    def __init__(self, idle_s: float = 3600.0, max_sessions: int = 64, max_bytes: int | None = None,
                 keep_s: float = 0.0, share: float = 1.0, max_age_s: float | None = None):
        self._sessions: ClientStore[Session] = ClientStore(
            Session, share=share, max_age_s=max_age_s, idle_s=idle_s, max_entries=max_sessions,
            max_bytes=_budget_bytes() if max_bytes is None else max_bytes,
            size_of=lambda s: s.trained.nbytes if s.trained is not None else 0,
            busy=lambda s: s.running, release=Session.forget_files, shrink=_forget_model,
            keep_s=keep_s, describe=lambda s: _describe(s, self.NOUN))
        self._lock = self._sessions.lock

    @staticmethod
    def _check_id(session_id) -> None:
        if not session_id or not isinstance(session_id, str):
            raise InputError("No session id: the tiny GPT is kept per session.")

    def begin(self, session_id: str, nbytes: int) -> Session:
        """Mark a run as started (one per session), clear its stop flag; refuse when no room."""
        self._check_id(session_id)
        with self._lock:
            s = self._sessions.get(session_id)
            if s.running:
                raise InputError(f"The {self.NOUN} is already training in this session: wait for it, or press Stop.")
            need = min(nbytes, BYTES_GUESS)
            refusal = self._sessions.client_refusal(session_id, need, self.NOUN, f"the memory for {self.NOUN}s")
            if refusal is not None:
                raise InputError(refusal)
            if not self._sessions.could_fit(session_id, need):
                raise InputError(self._sessions.full_message(session_id, self.NOUN, "memory for trained models"))
            s.running = True
            s.stop.clear()
            return s

    def end(self, session_id: str, trained: Model | None) -> None:
        with self._lock:
            s = self._sessions.get(session_id)
            s.running = False
            if trained is not None:
                self._sessions.forget_gone(session_id)
                self._sessions.renew(session_id)  # a new model: its reservation's age starts now
                s.trained = trained
                s.forget_files()
            self._sessions.get(session_id)  # evict again, now that the result counts

    def request_stop(self, session_id: str) -> bool:
        with self._lock:
            s = self._sessions.peek(session_id) if session_id else None
            if s is None:
                return False
            s.stop.set()
            return s.running

    def wait_ended(self, session_id: str, wait_s: float) -> bool:
        """Wait up to `wait_s` for the session's run to end -> has it? (Its last result is out by then.)"""
        return not session_id or self._sessions.wait_idle(session_id, wait_s)

    def trained(self, session_id: str) -> Model:
        self._check_id(session_id)
        s = self._sessions.peek(session_id)
        if s is None or s.trained is None:
            gone = self._sessions.why_gone(session_id)
            if gone is not None:
                why = "after a long idle time" if gone[0] == "idle" else "to make room for other visitors"
                raise InputError(f"No {self.NOUN} in this session now: your {gone[1]} was removed {why}. "
                                 "Train it again.")
            raise InputError(f"No {self.NOUN} in this session yet: train one first ({self.TRAIN_HINT}).")
        self._sessions.touch(session_id)
        return s.trained

    def by_name(self, name: str) -> Model | None:
        """The trained model offered under `name` (and its session marked used), or None: only to a
        request of the client (the address) whose session trained it (issue #39: a name once worked
        from anywhere, for as long as the model lived)."""
        with self._lock:
            for key in self._sessions.keys():
                s = self._sessions.peek(key)
                if s is not None and s.trained is not None and secrets.compare_digest(s.trained.name, name):
                    if not clients.same_client(key):
                        return None
                    self._sessions.touch(key)
                    return s.trained
        return None

    def files_dir(self, session_id: str, root: str | Path | None = None) -> Path:
        with self._lock:
            s = self._sessions.get(session_id)
            if s.files is None or not s.files.is_dir():
                if root is not None:
                    Path(root).mkdir(parents=True, exist_ok=True)
                s.files = Path(tempfile.mkdtemp(prefix="tlab-gpt-", dir=root))
                clients.own(s.files, session_id)  # its zip is served to this client only
            return s.files

    def peek(self, session_id: str) -> Session | None:
        return self._sessions.peek(session_id)

    def drop(self, session_id: str) -> None:
        s = self._sessions.drop(session_id)
        if s is not None:
            s.stop.set()
            del s
            memory.give_back()  # what the closed page's model held in malloc arenas goes back

    def bytes_used(self) -> int:
        return self._sessions.total_bytes()


STORE = ProcessWide(lambda: GptStore(**config.store_settings()))


def get_store() -> GptStore:
    return STORE.get()
