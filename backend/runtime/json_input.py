"""JSON from a visitor (settings strings, strategy lists, JSONL uploads), read safely.

`json.loads("[" * 100_000)` raises RecursionError, which no caller expected: a raw "maximum
recursion depth exceeded" reached the page. Here too deep a value is a readable InputError, and
nothing nested past MAX_DEPTH levels gets through to code that walks it.
"""

from __future__ import annotations

import json
from typing import Any

from backend.runtime.errors import InputError

MAX_DEPTH = 32  # every JSON this app reads is 1-3 levels deep


def depth(value: Any) -> int:
    """Nesting depth of lists and dicts (a scalar is 0), found without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def loads(text: str, what: str) -> Any:
    """`json.loads`, but a value nested deeper than MAX_DEPTH is refused by name. A malformed
    text still raises json.JSONDecodeError, for the caller's own message about its format."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputError(f"{what} is nested too deeply to read: at most {MAX_DEPTH} levels of lists and "
                         "objects.") from None
    if depth(value) > MAX_DEPTH:
        raise InputError(f"{what} is nested {depth(value)} levels deep; at most {MAX_DEPTH} are allowed.")
    return value
