"""The Interventions tab's contracts (backend/runtime/contract.py): at most MAX_TOKENS tokens; a sweep runs
the text once per head of the layer (9 for the decoder, 12 for the encoder)."""

from __future__ import annotations

from backend.hub import sizing
from backend.interventions.api import MAX_NEW_TOKENS, MAX_TOKENS, MAX_TOP_K, ROLES
from backend.runtime import speeds
from backend.runtime.contract import Contract, Cost, Free, Int, Text

SPEC_CHARS = 2_000
MOST_HEADS = 16


def _tokens(values: dict) -> tuple[str, int]:
    role = values.get("model") if values.get("model") in ROLES else "decoder"
    return role, sizing.tokens_at_most(role, [values.get("text")], MAX_TOKENS, "an intervention")


def _intervene(values: dict) -> Cost:
    role, n = _tokens(values)
    new = int(values.get("new_tokens") or 0)
    return Cost(mb=200, s=2 + 2 * (new / speeds.per_s("decoder_steps") + speeds.seconds(f"{role}_tokens", n)),
                what="this intervention")


def _sweep(values: dict) -> Cost:
    role, n = _tokens(values)
    return Cost(mb=200, s=2 + (MOST_HEADS + 1) * speeds.seconds(f"{role}_tokens", max(n, 16)) * 4,
                what="this head sweep")


ROLE_NAME = Free(40)  # the entry point words an unknown role itself ("Role must be 'encoder' or 'decoder'")
CONTRACTS = {
    "intervene": Contract({"model": ROLE_NAME, "text": Text("text"),
                           "spec": Free(SPEC_CHARS),
                           "new_tokens": Int(0, MAX_NEW_TOKENS), "top_k": Int(1, MAX_TOP_K)}, _intervene),
    "sweep_heads": Contract({"model": ROLE_NAME, "text": Text("text"),
                             "layer": Int(-10**6, 10**6, optional=True)}, _sweep),
}
