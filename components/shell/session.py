"""The browser session a request comes from: what a tab keeps per visitor is keyed on it, and counted
against the share of its client (its address: backend/runtime/clients.py)."""

from __future__ import annotations

from backend.runtime import clients
from backend.runtime.errors import InputError


def session_of(request, what: str) -> str:
    """The request's Gradio session id; `what` names what the tab keeps per session, for the
    refusal when there is none (an API call without a session, a page that lost its own)."""
    sid = getattr(request, "session_hash", None) if request is not None else None
    if not sid:
        raise InputError(f"No session: {what} is kept per browser session; reload the page.")
    clients.bind(sid, clients.of_request(request))  # what the session holds counts against its client's share
    return sid
