"""One check for a required text field, so every tab words 'empty' and 'too long' alike."""

from __future__ import annotations

from backend.errors import InputError


def require_text(text, what: str, max_chars: int, hint: str = "type or paste some text, or pick an example.") -> str:
    """Return `text` stripped, or raise InputError saying what is wrong and what to do."""
    if text is not None and not isinstance(text, str):
        raise InputError(f"The {what} must be text, got {type(text).__name__}.")
    stripped = (text or "").strip()
    if not stripped:
        raise InputError(f"The {what} is empty: {hint}")
    if len(text) > max_chars:
        raise InputError(f"The {what} is {len(text):,} characters long; the limit is {max_chars:,}. Shorten it.")
    return stripped
