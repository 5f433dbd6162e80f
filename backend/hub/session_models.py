"""Models a session trained for itself that serve one of its roles, in that session only.

The Train tab's "Use in Pipelines": the tab that trains registers a provider for the role
(`provide`); the tab that serves the role asks first (`serve`) and falls back to the profile's
model when the provider answers None. Neither tab imports the other.
"""

from __future__ import annotations

from typing import Callable

_PROVIDERS: dict[str, Callable[..., dict | None]] = {}


def provide(role: str, provider: Callable[..., dict | None]) -> None:
    """`provider(session_id, *args, **kwargs)` -> the role's result by the session's own model, or None."""
    _PROVIDERS[role] = provider


def serve(role: str, session_id: str | None, *args, **kwargs) -> dict | None:
    """The result by the session's own model for `role`, or None (no provider, no session, not chosen)."""
    provider = _PROVIDERS.get(role)
    if provider is None or not session_id:
        return None
    return provider(session_id, *args, **kwargs)
