"""The Attention tab's contracts (backend/runtime/contract.py): at most MAX_TOKENS tokens (T x T matrices),
counted by the role's tokenizer at the door."""

from __future__ import annotations

from backend.engines.attention.extract import MAX_TOKENS, ROLES
from backend.hub import sizing
from backend.runtime import speeds
from backend.runtime.contract import Contract, Cost, Free, Int, Text

ANY_INDEX = Int(-10**6, 10**6, optional=True)  # the model's own range is checked by the entry point


def _cost(values: dict) -> Cost:
    role = values.get("role") if values.get("role") in ROLES else "encoder"
    n = sizing.tokens_at_most(role, [values.get("text"), values.get("text_b")], MAX_TOKENS, "the attention view")
    kind = "decoder_tokens" if role == "decoder" else "encoder_tokens"
    return Cost(mb=100 + n * n * 0.02, s=1.0 + 20 * speeds.seconds(kind, n), what="this attention view")


TEXTS = {"text": Text("attention"), "text_b": Text("attention", optional=True), "role": Free(40)}
ROLE_NAME = Free(40)  # the entry point words an unknown role itself ("Role must be 'encoder' or 'decoder'")
CONTRACTS = {
    "attention": Contract({**TEXTS, "layer": ANY_INDEX}, _cost),
    "attention_math": Contract({**TEXTS, "layer": ANY_INDEX, "head": ANY_INDEX, "query_index": ANY_INDEX}, _cost),
}
