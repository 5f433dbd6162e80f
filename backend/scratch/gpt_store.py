"""The tiny GPTs trained in the From scratch tab, one per session: the one store of trained models
(backend/runtime/trained_store.py), like the Train tab's models: idle eviction, a
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
import time
from dataclasses import dataclass, field
from typing import Any

from backend.runtime import clients, config
from backend.runtime import env
from backend.runtime.singleton import ProcessWide
from backend.runtime.trained_store import Session, TrainedStore

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


__all__ = ["GptStore", "Model", "STORE", "Session", "get_store"]


def _describe(s: Session, noun: str = "tiny GPT") -> str:
    return f"{noun} trained on {s.trained.info.get('corpus', 'your text')}" if s.trained else noun


def _budget_bytes() -> int:
    raw = env.read("TLAB_SCRATCH_GPT_MB") or env.var("TLAB_SCRATCH_GPT_MB").default
    return int(float(raw) * 1024 * 1024)


class GptStore(TrainedStore):
    NOUN, TRAIN_HINT = "tiny GPT", "Train tiny GPT, or /train_gpt with the same client"  # a subclass names its own
    FILES_PREFIX = "tlab-gpt-"
    NO_ID = "No session id: the tiny GPT is kept per session."

    def __init__(self, idle_s: float = 3600.0, max_sessions: int = 64, max_bytes: int | None = None,
                 keep_s: float = 0.0, share: float = 1.0, max_age_s: float | None = None):
        super().__init__(idle_s=idle_s, max_sessions=max_sessions,
                         max_bytes=_budget_bytes() if max_bytes is None else max_bytes, keep_s=keep_s, share=share,
                         max_age_s=max_age_s, describe=lambda s: _describe(s, self.NOUN))

    def share_room(self) -> str:
        return f"the memory for {self.NOUN}s"

    def begin(self, session_id: str, nbytes: int) -> Session:
        """Mark a run as started (one per session), clear its stop flag; refuse when no room."""
        return self._begin(session_id, min(nbytes, BYTES_GUESS),
                           f"The {self.NOUN} is already training in this session: wait for it, or press Stop.")

    def _gone_message(self, session_id: str) -> str | None:
        gone = self._sessions.why_gone(session_id)
        if gone is None:
            return None
        why = "after a long idle time" if gone[0] == "idle" else "to make room for other visitors"
        return f"No {self.NOUN} in this session now: your {gone[1]} was removed {why}. Train it again."

    def _missing_message(self) -> str:
        return f"No {self.NOUN} in this session yet: train one first ({self.TRAIN_HINT})."

    def by_name(self, name: str) -> Model | None:
        """The trained model offered under `name` (and its session marked used), or None: only to a
        request of the client (the address) whose session trained it (a name alone would let anyone who
        learns it use the model for as long as it lived)."""
        with self._lock:
            for key in self._sessions.keys():
                s = self._sessions.peek(key)
                if s is not None and s.trained is not None and secrets.compare_digest(s.trained.name, name):
                    if not clients.same_client(key):
                        return None
                    self._sessions.touch(key)
                    return s.trained
        return None


STORE = ProcessWide(lambda: GptStore(**config.store_settings()))


def get_store() -> GptStore:
    return STORE.get()
