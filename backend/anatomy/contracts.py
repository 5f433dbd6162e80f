"""The Anatomy tab's contract (backend/runtime/contract.py): at most MAX_TOKENS tokens (every layer's states
and one head's matrices go into the result), counted by the role's tokenizer at the door."""

from __future__ import annotations

from backend.anatomy.api import MAX_TOKENS, ROLES
from backend.hub import sizing
from backend.runtime import speeds
from backend.runtime.contract import Contract, Cost, Free, Int, Text

ANY_INDEX = Int(-10**6, 10**6, optional=True)  # the model's own range is checked by the entry point


def _cost(values: dict) -> Cost:
    role = values.get("role") if values.get("role") in ROLES else "encoder"
    override = (values.get("override") or "").strip() or None
    n = sizing.tokens_at_most(role, [values.get("text"), values.get("text_b")], MAX_TOKENS, "the Anatomy tab", override)
    kind = "decoder_tokens" if role == "decoder" else "encoder_tokens"
    return Cost(mb=200 + n * n * 0.01, s=1.0 + 40 * speeds.seconds(kind, n), what="this anatomy")


ROLE_NAME = Free(40)  # the entry point words an unknown role itself ("Role must be 'encoder' or 'decoder'")
CONTRACTS = {
    "anatomy": Contract({"text": Text("attention"), "text_b": Text("attention", optional=True),
                         "role": ROLE_NAME, "layer": ANY_INDEX, "head": ANY_INDEX,
                         "token_index": ANY_INDEX, "override": Free(1000)}, _cost),
}
