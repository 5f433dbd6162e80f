"""The Attention tab's backend: a tab does `from backend import attention` and calls
`attention.attention(...)`, `attention.heatmap(...)`, `attention.attention_math(...)` or
`attention.positions(...)`; each asks the hub for the role's model itself.

Model-level functions (unit tests pass them tiny models) live in `backend.engines.attention`
(`extract`, `math` from scratch, `encodings` for positions); the bertviz views are `views`.
"""

from backend.attention.api import attention, attention_math, check_role, heatmap, positions
from backend.engines.attention.extract import FIRST_EXAMPLE, MAX_TOKENS, ROLES, SUMMARY_METRICS, VIEW_MAX_TOKENS

__all__ = [
    "ROLES",
    "FIRST_EXAMPLE",
    "MAX_TOKENS",
    "SUMMARY_METRICS",
    "VIEW_MAX_TOKENS",
    "attention",
    "attention_math",
    "check_role",
    "heatmap",
    "positions",
]
