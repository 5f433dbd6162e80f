"""The Multilingual tab's backend (chapter 4): a tab does `from backend import multilingual` and calls
`multilingual.transfer()` (the default run's table, read from the cache), `multilingual.ner(text, run)`, and
`multilingual.train_iter(session, languages, steps)` / `stop` (a learner's own run, live: learner.py).
Model-level pieces live in backend.engines (ner_transfer, ner_languages); the default run is built at
set-up by backend.hub.multilingual_builder."""

from backend.multilingual.api import RUN_NAMES, ner, transfer
from backend.multilingual.learner import DEFAULT_STEPS, MAX_STEPS, stop, train, train_iter

__all__ = ["DEFAULT_STEPS", "MAX_STEPS", "RUN_NAMES", "ner", "stop", "train", "train_iter", "transfer"]
