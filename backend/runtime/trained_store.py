"""The one store of models a visitor trains: one per session, bounded by the one `ClientStore`
(backend/runtime/client_store.py): idle eviction, a session cap, a memory budget for all sessions
together shared fairly between clients, a model used in the last `keep_s` (TLAB_KEEP_ITEMS_S) never
evicted for a newcomer, a run started only when its model's room can be found, and a visitor whose
model went is told why.

A session holds its last trained model, a stop flag that the Stop button sets, whether a run is
going, and a private temp folder for downloads (`zipped`) that is deleted with the session (and
with the model, when memory pressure takes it). The Train tab's classifiers (backend/train/store.py) and
the From scratch tab's tiny GPT and encoder-decoder (backend/scratch/gpt_store.py) are this store
with their own words, budget and session fields.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from backend.runtime import clients, memory
from backend.runtime.client_store import ClientStore
from backend.runtime.errors import InputError


@dataclass
class Session:
    trained: Any = None
    stop: threading.Event = field(default_factory=threading.Event)
    running: bool = False
    files: Path | None = None  # private temp folder (downloads), deleted with the session

    def forget_files(self) -> None:
        if self.files is not None:
            shutil.rmtree(self.files, ignore_errors=True)
            self.files = None


def forget_model(s: Session) -> bool:
    """Memory pressure: a session loses its trained model (and its files), not its place."""
    if s.trained is None:
        return False
    s.trained = None
    s.forget_files()
    return True


class TrainedStore:
    """Trained models per session. A subclass names its words (NOUN: the model in a refusal; ROOM:
    what the memory of all sessions is called, `share_room`: one client's share of it), its `Session`
    type, its files' prefix and the messages for a missing session id or model."""

    SESSION: type = Session
    NOUN = "trained model"
    ROOM = "memory for trained models"
    FILES_PREFIX = "tlab-train-"
    NO_ID = "No session id: trained models are kept per session."

    def __init__(self, *, idle_s: float, max_sessions: int, max_bytes: int, keep_s: float, share: float,
                 max_age_s: float | None, describe: Callable[[Any], str]):
        self._sessions: ClientStore = ClientStore(
            self.SESSION, share=share, max_age_s=max_age_s, idle_s=idle_s, max_entries=max_sessions,
            max_bytes=max_bytes, size_of=lambda s: s.trained.nbytes if s.trained is not None else 0,
            busy=lambda s: s.running, release=self.SESSION.forget_files, shrink=forget_model,
            keep_s=keep_s, describe=describe)
        self._lock = self._sessions.lock

    @property
    def max_bytes(self) -> int | None:
        return self._sessions.max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int | None) -> None:
        """A new memory budget: it holds from the next admission (a store over it evicts then, as always)."""
        self._sessions.max_bytes = value

    def _check_id(self, session_id) -> None:
        if not session_id or not isinstance(session_id, str):
            raise InputError(self.NO_ID)

    def share_room(self) -> str:
        """What one client's share of the memory is called in a refusal."""
        return f"the {self.ROOM}"

    def _touched(self, s) -> None:
        """A subclass's step when a session is used (the Train tab's keeps the time)."""

    def session(self, session_id: str):
        """The session (made if new, which may evict others)."""
        self._check_id(session_id)
        s = self._sessions.get(session_id)
        self._touched(s)
        return s

    def _begin(self, session_id: str, need: int, busy: str):
        """Mark a run as started (one per session) and clear its stop flag; refuse when a run is going
        (`busy`) or no room of `need` bytes can be found."""
        with self._lock:
            s = self.session(session_id)
            if s.running:
                raise InputError(busy)
            refusal = self._sessions.client_refusal(session_id, need, self.NOUN, self.share_room())
            if refusal is not None:
                raise InputError(refusal)
            if not self._sessions.could_fit(session_id, need):
                raise InputError(self._sessions.full_message(session_id, self.NOUN, self.ROOM))
            s.running = True
            s.stop.clear()
            return s

    def _took(self, s) -> None:
        """A subclass's step when a session takes a new model (after its files are forgotten)."""

    def end(self, session_id: str, trained) -> None:
        """The run is over; `trained` (if any) becomes the session's model, even if the session was
        evicted while it ran."""
        with self._lock:
            s = self._sessions.get(session_id)
            s.running = False
            if trained is not None:
                self._sessions.forget_gone(session_id)
                self._sessions.renew(session_id)  # a new model: its reservation's age starts now
                s.trained = trained
                s.forget_files()
                self._took(s)
            self._sessions.get(session_id)  # evict again, now that the result counts

    def request_stop(self, session_id: str) -> bool:
        """Set the session's stop flag; True if a run was going."""
        with self._lock:
            s = self._sessions.peek(session_id) if session_id else None
            if s is None:
                return False
            s.stop.set()
            return s.running

    def wait_ended(self, session_id: str, wait_s: float) -> bool:
        """Wait up to `wait_s` for the session's run to end -> has it? (Its last result is out by then.)"""
        return not session_id or self._sessions.wait_idle(session_id, wait_s)

    def _gone_message(self, session_id: str) -> str | None:
        """Why the session has no model now (evicted, and how), or None."""
        raise NotImplementedError

    def _missing_message(self) -> str:
        raise NotImplementedError

    def trained(self, session_id: str):
        """The session's model (marked used); never makes a session, so asking evicts nobody."""
        self._check_id(session_id)
        s = self._sessions.peek(session_id)
        if s is None or s.trained is None:
            raise InputError(self._gone_message(session_id) or self._missing_message())
        self._sessions.touch(session_id)
        self._touched(s)
        return s.trained

    def peek(self, session_id: str):
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
                s.files = Path(tempfile.mkdtemp(prefix=self.FILES_PREFIX, dir=root))
                clients.own(s.files, session_id)  # its zip is served to this client only
            return s.files

    def zipped(self, session_id: str, root: str | Path | None, stem: str, write: Callable[[Path], object],
               stored: tuple[str, ...] = ()) -> tuple[Path, list[str]]:
        """The download: `write(folder)` fills a folder named `stem` in the session's private folder,
        which is zipped beside it (files ending in `stored` uncompressed: weights barely shrink) and
        removed. -> (the zip, the names of the files in it)."""
        base = self.files_dir(session_id, root)
        folder = base / stem
        write(folder)
        zpath = base / f"{stem}.zip"
        with zipfile.ZipFile(zpath, "w") as z:
            for f in sorted(folder.iterdir()):
                kind = zipfile.ZIP_STORED if f.suffix in stored else zipfile.ZIP_DEFLATED
                z.write(f, f"{stem}/{f.name}", compress_type=kind)
        files = sorted(f.name for f in folder.iterdir())
        shutil.rmtree(folder, ignore_errors=True)
        return zpath, files

    def drop(self, session_id: str) -> None:
        s = self._sessions.drop(session_id)
        if s is not None:
            s.stop.set()
            del s
            memory.give_back()  # what the closed page's model held in malloc arenas goes back

    def bytes_used(self) -> int:
        return self._sessions.total_bytes()

    def evict(self, keep: str | None = None, now: float | None = None) -> list[str]:
        """Idle sessions, then the oldest beyond max_sessions, then the least recently used
        trained models while all of them together exceed the memory budget (never `keep`,
        never a running session)."""
        return self._sessions.evict(keep=keep, now=now)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._sessions
