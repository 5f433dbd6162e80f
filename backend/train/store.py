"""Trained classifiers per session, in the one store of trained models
(backend/runtime/trained_store.py), bounded like the search indexes: idle eviction, a session
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

import time
from dataclasses import dataclass, field
from typing import Any

from backend.runtime import config, memory, trained_store
from backend.runtime.singleton import ProcessWide

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
class Session(trained_store.Session):
    trained: Trained | None = None
    last_used: float = field(default_factory=time.monotonic)
    use_in_pipelines: str | None = None  # the trained method Pipelines' Classify uses, None = the profile's


def _budget_bytes() -> int:
    return int(config.get_settings().train_session_mb * 1024 * 1024)


def _describe(s: Session) -> str:
    """The model, in words, for the message its session gets if it is evicted."""
    t = s.trained
    if t is None:
        return "model"
    what = "token classifier (NER)" if getattr(t, "task", None) == "ner" else "classifier"
    return f"{what} trained on '{t.dataset.get('name', '?')}'"


class TrainStore(trained_store.TrainedStore):
    """The sessions of the Train tab."""

    SESSION = Session

    def __init__(self, idle_s: float = 3600.0, max_sessions: int = 32, max_bytes: int | None = None,
                 keep_s: float = 0.0, share: float = 1.0, max_age_s: float | None = None):
        super().__init__(idle_s=idle_s, max_sessions=max_sessions,
                         max_bytes=_budget_bytes() if max_bytes is None else max_bytes, keep_s=keep_s, share=share,
                         max_age_s=max_age_s, describe=_describe)
        self.follows_setting = max_bytes is None  # its budget is TLAB_TRAIN_SESSION_MB, read on each get_store()

    def _touched(self, s: Session) -> None:
        s.last_used = time.monotonic()

    def begin(self, session_id: str) -> Session:
        """Mark a run as started (one at a time per session) and clear its stop flag."""
        guess = min(MODEL_BYTES_GUESS, (self.max_bytes or 8 * MODEL_BYTES_GUESS) // 8)  # small test budgets
        return self._begin(session_id, guess, "A training run is already going in this session: wait for it, "
                                              "or press Stop.")

    def _took(self, s: Session) -> None:
        s.use_in_pipelines = None  # a new model: Pipelines goes back to the profile's until asked

    def end(self, session_id: str, trained: Trained | None) -> None:
        super().end(session_id, trained)
        memory.give_back()  # the run's thread freed its blocks into its malloc arena: return them

    def _missing_message(self) -> str:
        return ("No trained model in this session yet: build one first by training "
                "(the Train tab, or /train with the same client).")

    def _gone_message(self, session_id: str) -> str | None:
        found = self._sessions.why_gone(session_id)
        if found is None or self._sessions.peek(session_id) is not None and self._sessions.peek(session_id).running:
            return None
        why = (f"after {self._sessions.idle_s / 60:.0f} minutes unused" if found[0] == "idle" else
               "to make room for other visitors (the server keeps the models used most recently)")
        return (f"No trained model in this session now: your {found[1] or 'model'} was removed {why}. "
                "Train it again (the Train tab, or /train with the same client).")


STORE = ProcessWide(lambda: TrainStore(**config.store_settings()))


def get_store() -> TrainStore:
    """The process's store, its memory budget as TLAB_TRAIN_SESSION_MB says now (an operator may change it on a
    running app: components/shell/live_settings.py)."""
    store = STORE.get()
    if store.follows_setting:
        store.max_bytes = _budget_bytes()
    return store
