"""The browser session a request comes from: what a tab keeps per visitor is keyed on it, and counted
against the share of its client (its address: backend/runtime/clients.py)."""

from __future__ import annotations

import gradio as gr

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


# How long a Stop click waits for the run to end. Stop's answer and the run's last message reach the page by
# different roads (a direct call; the queue's stream), in either order, so only an answer that writes nothing
# is safe once the run may have ended. A run ends within a step of its Stop; with 3 s, a step slowed by a
# loaded box let "Stopping..." land after the final status and cover it (CI saw it). Meanwhile the status line
# shows Stop's progress; "Stopping..." is written only when the run is still going after this long.
STOP_WAIT_S = 60.0


def stop_said(stop, sid: str | None, stopping: str):
    """What a training tab's Stop button writes into the run's status line. A run now ends within a
    step of its Stop, often before Stop's own answer reaches the page: written then,
    "Stopping..." would cover the run's final status for good. So Stop waits up to STOP_WAIT_S for
    the run to end (its final status is on its way by then) and writes nothing if it has; a run
    still going after that long is told to the learner.
    `stop(sid, wait_s=...)` -> {"stopping": was a run going, "ended": has it ended since}."""
    said = stop(sid, wait_s=STOP_WAIT_S) if sid else {"stopping": False}
    if not said["stopping"]:
        return "*Nothing is training in this session.*"
    return gr.skip() if said.get("ended") else stopping
