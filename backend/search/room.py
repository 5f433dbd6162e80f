"""The private-index room shared by all visitors: what a private index costs, and what a visitor
is told when the room is full or their index was evicted (backend/runtime/sessions.py decides who
goes: idle first, never an index used in the last `keep_s`)."""

from __future__ import annotations


def held(state) -> str:
    """What a session's costly state was, in words (told to it if that state is evicted)."""
    entry = getattr(state, "entry", None)
    if entry is not None and not entry.shared:
        return f"private index of '{entry.corpus.name}' ({len(entry.corpus):,} passages)"
    return "uploaded file"


def private_bytes_estimate(n_passages: int, dim: int) -> int:
    """What a private index of n passages will hold: its vectors, and as much again for the index."""
    return int(n_passages) * int(dim) * 4 * 2


def gone_message(store, session_id: str) -> str | None:
    """Why this session has no private index any more, in words; None if it never lost one."""
    found = store.why_gone(session_id) if session_id else None
    if found is None:
        return None
    reason, what = found
    why = (f"after {store.idle_s / 60:.0f} minutes unused" if reason == "idle" else
           "to make room for other visitors (the server keeps the indexes used most recently)")
    return (f"No index in this session now: your {what or 'private index'} was removed {why}, "
            f"so build one first (choose a corpus and press 'Build index', or call /build_index).")


def full_message(keep_s: float) -> str:
    return ("The server's memory for private indexes is full: other visitors are using theirs (an "
            f"index stays reserved for {keep_s / 60:.0f} minutes after its last use). Try again in a few "
            "minutes, or search a built-in corpus (glossary, docstrings), which every visitor shares.")


def refusal(store, session_id: str, need: int) -> str | None:
    """Why `session_id` may not build a private index of `need` bytes now (its client's share is full,
    or the whole room is), else None, and the index's reservation starts now."""
    why = store.client_refusal(session_id, need, "private index", "the memory for private indexes")
    if why is not None:
        return why + " Built-in corpora (glossary, docstrings) are shared: search them any time."
    if not store.room_for(session_id, need):
        return full_message(store.keep_s)
    store.renew(session_id)
    return None
