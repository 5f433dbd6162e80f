"""The Efficiency tab's backend (the book's chapter 8): a tab does `from backend import efficiency`
and calls `efficiency.efficiency(...)`, which compares the served fp32 models with their int8
copies. Model-level helpers (unit tests pass them tiny models) live in `quantize` and `measure`.
"""

from backend.efficiency.api import (
    AGREE_SHORT,
    DEFAULT_NEW_TOKENS,
    DEFAULT_PROMPTS,
    DEFAULT_TEXTS,
    MAX_ITEMS,
    efficiency,
)

__all__ = ["AGREE_SHORT", "DEFAULT_NEW_TOKENS", "DEFAULT_PROMPTS", "DEFAULT_TEXTS", "MAX_ITEMS", "efficiency"]
