"""Decoding playground: generate with one strategy and show why each token came out.

A tab does `from backend import decoding` and calls `decoding.decode(prompt, settings)`; the
settings type and the limits the widgets need come along. Model-level functions, for tests
with tiny models and for other backends, are in `backend.decoding.generate`.
"""

from backend.decoding.api import compare, decode, decode_stream, step_distribution
from backend.decoding.presets import COMPARE_DEFAULT, PRESETS, UNICORN
from backend.decoding.settings import (
    MAX_BEAMS,
    MAX_NEW_TOKENS_CAP,
    MAX_TOP_N,
    PRECISIONS,
    STRATEGIES,
    DecodeSettings,
)

__all__ = [
    "COMPARE_DEFAULT",
    "MAX_BEAMS",
    "MAX_NEW_TOKENS_CAP",
    "MAX_TOP_N",
    "PRECISIONS",
    "PRESETS",
    "STRATEGIES",
    "UNICORN",
    "DecodeSettings",
    "compare",
    "decode",
    "decode_stream",
    "step_distribution",
]
