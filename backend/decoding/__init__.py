"""Decoding playground: generate with one strategy and show why each token came out.

A tab does `from backend import decoding` and calls `decoding.decode(prompt, settings)`; the
settings type, its one validator and the limits the widgets need come along. Generation itself, for tests
with tiny models and for other tabs, is `backend.engines.generation`.
"""

from backend.decoding.api import LONG_DECODE_TOKENS
from backend.decoding.api import (
    compare,
    decode,
    decode_by_hand,
    decode_stream,
    generation_attention,
    plan,
    step_distribution,
)
from backend.decoding.attention_growth import MAX_NEW as GROWTH_MAX_NEW
from backend.decoding.by_hand import ACTIONS as BY_HAND_ACTIONS
from backend.decoding.by_hand import MAX_CONTINUE as BY_HAND_MAX_CONTINUE
from backend.decoding.by_hand import MAX_TOP_K as BY_HAND_MAX_TOP_K
from backend.engines.generation.presets import COMPARE_DEFAULT, PRESETS, UNICORN
from backend.engines.generation.settings import (
    MAX_BEAMS,
    MAX_NEW_TOKENS_CAP,
    MAX_TOP_N,
    PRECISIONS,
    STRATEGIES,
    DecodeSettings,
    parse_settings,
)

__all__ = [
    "LONG_DECODE_TOKENS",
    "BY_HAND_ACTIONS",
    "GROWTH_MAX_NEW",
    "BY_HAND_MAX_CONTINUE",
    "BY_HAND_MAX_TOP_K",
    "COMPARE_DEFAULT",
    "MAX_BEAMS",
    "MAX_NEW_TOKENS_CAP",
    "MAX_TOP_N",
    "PRECISIONS",
    "PRESETS",
    "STRATEGIES",
    "UNICORN",
    "DecodeSettings",
    "parse_settings",
    "compare",
    "decode",
    "decode_by_hand",
    "decode_stream",
    "generation_attention",
    "plan",
    "step_distribution",
]
