"""The Multilingual tab's backend (chapter 4): a tab does `from backend import multilingual` and calls
`multilingual.transfer()` (the default run's table, read from the cache) and `multilingual.ner(text, run)`.
Model-level pieces live in backend.engines (ner_transfer, ner_languages); the default run is built at
set-up by backend.hub.multilingual_builder."""

from backend.multilingual.api import RUN_NAMES, ner, transfer

__all__ = ["RUN_NAMES", "ner", "transfer"]
