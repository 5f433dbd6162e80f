"""A role's stand-in when the generation server writes its replies: the role's tokenizer and
provenance, no weights in this process.

Why in the hub: whether the server may serve a role depends on what the role resolves to (an
instruct decoder may; a dedicated summariser or an extractive QA model may not), which is the
hub's knowledge; the server client (`backend.engines.server.chat`) knows nothing of roles.
The task code then calls `reply(lm, messages, ...)` whichever it got.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend.engines.tasks import instruct
from backend.engines.server import chat as remote_chat
from backend.engines.server import generation as remote
from backend.hub.loader import get_hub
from backend.hub.policy import resolve
from backend.runtime.errors import LabError
from backend.runtime.plan import Plan

MODEL_BOX_NOTE = remote.MODEL_BOX_NOTE


@dataclass
class ServerModel:
    """Duck-types `LoadedModel` where the tasks read it (tokenizer, method, describe); `model` is None."""

    server: remote.Server
    tokenizer: Any
    role: str
    checkpoint: str
    method: str
    provenance: dict
    model: Any = None

    def describe(self) -> dict:
        return dict(self.provenance)


def server_model(role: str, override: str | None = None, gen: dict | None = None,
                 plan: Plan | None = None) -> tuple[ServerModel | None, str | None]:
    """(the stand-in, or None; the note a result shows when a server exists but this runs here).

    The server may write a role's replies when the role resolves to a causal decoder (the instruct
    fallbacks, the corpus reader) and `gen` asks for nothing it would run differently. No server
    configured, or a role it cannot serve: (None, None), nothing to say. A request's `plan` (made
    by `plan_for` as it joined the queue) already holds that answer: it is used, not asked again."""
    if plan is None:
        plan = plan_for(role, override, gen)
    if not plan.on_server:
        return None, plan.note
    try:
        eng = remote.server()
    except remote.ServerUnavailable as exc:
        return None, str(exc)
    tokenizer, r = get_hub().tokenizer(role)
    provenance = remote.describe(eng, r.role, r.checkpoint, r.source, r.reason, r.note)
    provenance["method"] = r.method
    return ServerModel(eng, tokenizer, r.role, r.checkpoint, r.method, provenance), None


def plan_for(role: str, override: str | None = None, gen: dict | None = None) -> Plan:
    """The plan of a request for this role's replies: may the server write them (`gate`), and is it
    long work here (the server may not, or its last health check was not up). No network."""
    here, note = gate(role, override, gen)
    return Plan(on_server=not here, long=here or not remote.last_known_up(), note=note)


def gate(role: str, override: str | None, gen: dict | None) -> tuple[bool, str | None]:
    """The server gate: (True, the note or None) when this role's replies are written here whatever
    the server's health; (False, None) when the server may write them. No network."""
    if not remote.configured_url():
        return True, None
    try:
        kind = resolve(role).kind
    except LabError:  # loading it here will say what is wrong, in the words every tab uses
        return True, None
    if kind != "causal_lm":
        return True, None
    if (override or "").strip():
        return True, MODEL_BOX_NOTE
    reason = remote_chat.in_process_reason(gen or {})
    return (True, reason) if reason else (False, None)


def reply(lm, messages: list[dict], max_new_tokens: int = 96, **gen) -> dict:
    """The instruct model's reply to `messages`: on the server for a stand-in, in this process
    otherwise; both in `instruct.chat_generate`'s shape."""
    if isinstance(lm, ServerModel):
        return remote_chat.chat(lm.server, lm.tokenizer, messages, max_new_tokens, **gen)
    return instruct.chat_generate(lm.model, lm.tokenizer, messages, max_new_tokens, **gen)
