"""Models a session trained for itself that serve one of its roles, in that session only.

The Train tab's "Use in Pipelines": the tab that trains registers a provider for the role
(`provide`); the tab that serves the role asks first (`serve`) and falls back to the profile's
model when the provider answers None. Neither tab imports the other.
"""

from __future__ import annotations

from typing import Callable

from backend.runtime.errors import ModelLoadError

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


# ----------------------------------------------------------- models a session offers by name
#
# A model trained in the From scratch tab lives in that session's memory, not on disk. It is
# offered to the model-box tabs (Anatomy, Decoding) under a name no stranger can guess,
# "session:<kind>-<random>", which the training tab hands to them; `hub.load(role, name)`
# asks the kind's finder here. The name is a capability, not a path: it is never part of a
# link, and it stops working when the session's model goes.

SESSION_PREFIX = "session:"
_FINDERS: dict[str, Callable[[str], dict | None]] = {}


def offer(kind: str, finder: Callable[[str], dict | None]) -> None:
    """`finder(name)` -> {"model", "tokenizer" (a transformers tokenizer), "checkpoint" (what to
    call it on screen), "roles" (the roles it can serve), "note"} or None when it has gone."""
    _FINDERS[kind] = finder


def is_session_name(value: str | None) -> bool:
    return isinstance(value, str) and value.strip().startswith(SESSION_PREFIX)


def find(role: str, name: str) -> dict:
    """The offered model behind `name` for `role`, or a ModelLoadError that says why not."""
    name = name.strip()
    kind = name[len(SESSION_PREFIX):].split("-", 1)[0]
    finder = _FINDERS.get(kind)
    found = finder(name) if finder is not None else None
    if found is None:
        raise ModelLoadError(f"'{name[:60]}' is not a model of this session now: a model trained in the From "
                             "scratch tab lives only as long as its session, and its name works only from the address "
                             "(the client) that trained it. Train it again there, or empty the model box.", role=role)
    if role not in found["roles"]:
        raise ModelLoadError(f"The {found['checkpoint']} cannot serve the {role} role: it serves "
                             f"{', '.join(found['roles'])}. Choose that role, or empty the model box.", role=role)
    return found
