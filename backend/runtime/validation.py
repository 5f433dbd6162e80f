"""One check for every free-text input, so every tab words 'empty' and 'too long' alike.

The limits and wording per use live in `config.TEXT_RULES`; this applies them.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from backend.runtime.config import text_rule
from backend.runtime.errors import InputError

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def check_text(text, use: str = "text", what: str | None = None) -> str:
    """Return `text` fit for a tokenizer, or raise InputError saying what is wrong and what to do.

    Lone surrogates (which no UTF-8 encoder accepts) become U+FFFD; `what` renames the field
    in messages when one use serves two boxes (the attention tab's second sentence).
    """
    rule = text_rule(use)
    what = what or rule.what
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise InputError(f"The {what} must be text, got {kind(text)}.")
    if len(text) > rule.max_chars:
        raise InputError(
            f"The {what} is {len(text):,} characters long; at most {rule.max_chars:,} are allowed. Shorten it."
        )
    text = _LONE_SURROGATE.sub("\ufffd", text)
    if not text.strip() and not rule.allow_empty:
        raise InputError(f"The {what} is empty: {rule.hint}")
    return text.strip() if rule.strip else text


# Numbers and flags arrive as floats from sliders, as strings or NaN from JSON: one way to read them.


def as_int(name: str, value: Any, what: str = "a whole number", lo: int | None = None, hi: int | None = None) -> int:
    """Accept 3, 3.0 and "3" (Gradio numbers arrive as floats, JSON may carry strings); refuse
    NaN, bools and fractions, and values outside [lo, hi] when given."""
    out = _whole(name, value, what)
    _check_bounds(name, out, lo, hi)
    return out


def _check_bounds(name: str, value, lo, hi) -> None:
    if (lo is None or value >= lo) and (hi is None or value <= hi):
        return
    if lo is not None and hi is not None:
        raise InputError(f"{name} must be between {lo:g} and {hi:g}, got {value:g}.")
    if lo is not None:
        raise InputError(f"{name} must be at least {lo:g}, got {value:g}.")
    raise InputError(f"{name} must be at most {hi:g}, got {value:g}.")


def _whole(name: str, value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise InputError(f"{name} must be {what}, got {_shown(value)}.")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text) if text else None
        except ValueError:
            raise InputError(f"{name} must be {what}, got {_shown(value)}.") from None
        if value is None:
            raise InputError(f"{name} must be {what}, got an empty value.")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise InputError(f"{name} must be {what}, got {_shown(value)}.")


def as_float(name: str, value: Any, lo: float | None = None, hi: float | None = None) -> float:
    """A finite number, within [lo, hi] when given."""
    out = _finite(name, value)
    _check_bounds(name, out, lo, hi)
    return out


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise InputError(f"{name} must be a number, got {_shown(value)}.")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {_shown(value)}.") from None
    if not math.isfinite(out):
        raise InputError(f"{name} must be a finite number, got {_shown(value)}.")
    return out


def as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    raise InputError(f"{name} must be true or false, got {_shown(value)}.")


def clean_text(text: str) -> str:
    """Lone surrogates (from JSON escapes like "\\ud800") -> U+FFFD, so UTF-8 encoders and
    tokenizers accept the text; for text that is not a form input (parsed files, titles)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def opt_text(name: str, value: Any, max_chars: int = 200) -> str | None:
    """An optional short text parameter (a field name, a model box): None or stripped text."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, got {_kind(value)}.")
    if len(value) > max_chars:
        raise InputError(f"{name} is {len(value):,} characters long; at most {max_chars:,} are allowed.")
    value = clean_text(value).strip()
    return value or None


def one_of(name: str, value: Any, choices, default: str | None = None) -> str:
    """A choice parameter (a radio or dropdown): one of `choices` (case-insensitive); None or
    empty -> `default` when one is given."""
    choices = list(choices)
    if (value is None or value == "") and default is not None:
        return default
    if isinstance(value, str):
        for choice in choices:
            if value.strip().lower() == str(choice).lower():
                return choice
    raise InputError(f"{name} must be one of {', '.join(map(str, choices))}; got {_shown(value)}.")


def _shown(value: Any) -> str:
    """A wrong value as a message quotes it: short ones whole, anything else by its kind, so a
    message never echoes a huge payload."""
    return repr(value) if isinstance(value, (str, int, float)) and len(repr(value)) <= 60 else _kind(value)


def kind(value: Any) -> str:
    """How a wrong-typed value is named in a message, in the caller's words, not Python's (never its
    whole content): "nothing", "an object", "a list", "true/false", "a number", "text"."""
    if value is None:
        return "nothing"
    return {dict: "an object", list: "a list", tuple: "a list", bool: "true/false", int: "a number",
            float: "a number", str: "text", bytes: "bytes"}.get(type(value), "a value of another kind")


_kind = kind


def fill_template(name: str, template: Any, value: str, default: str) -> str:
    """Put `value` where the template's one `{}` is: str.replace, never str.format (format would
    read attributes, index arguments or pad to millions of characters)."""
    return check_template(name, template, default).replace("{}", value)


def check_template(name: str, template: Any, default: str, max_chars: int = 500) -> str:
    """A label template: exactly one `{}` and no other brace; empty -> `default`."""
    if template is None:
        return default
    if not isinstance(template, str):
        raise InputError(f"{name} must be text with one {{}} where the label goes, got {_kind(template)}.")
    template = clean_text(template).strip()
    if not template:
        return default
    if len(template) > max_chars:
        raise InputError(f"{name} is {len(template):,} characters long; at most {max_chars} are allowed.")
    if template.count("{}") != 1 or template.replace("{}", "").count("{") or template.replace("{}", "").count("}"):
        raise InputError(f"{name} must contain exactly one {{}} where the label goes and no other "
                         f"braces, e.g. 'This text is about {{}}.'")
    return template
