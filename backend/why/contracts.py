"""The Why tab's contract (backend/runtime/contract.py). Every method is a number of forward (and backward)
passes over at most MAX_TOKENS tokens: integrated gradients `steps`, the deletion test `random_orders` x its
points, occlusion one pass a token. An explanation cut short explains nothing, so the whole must fit."""

from __future__ import annotations

from backend.hub import sizing
from backend.runtime import speeds
from backend.runtime.contract import Contract, Cost, Free, Int, Json, Text
from backend.why.api import MAX_RANDOM_ORDERS, MAX_STEPS, ROLES, TASKS
from backend.why.checks import MAX_POINTS
from backend.why.tasks import MAX_TOKENS
from backend.runtime.contract import Choice, Many

PASSES_PER_CHECK = 4  # each deletion point, and the sufficiency/comprehensiveness checks, per order


def _cost(values: dict) -> Cost:
    task = values.get("task") if values.get("task") in TASKS else "sentiment"
    role = ROLES.get(task, "sentiment")
    tokens = min(MAX_TOKENS, sizing.tokens(role if task != "session" else "embedder", values.get("text")))
    steps = int(values.get("steps") or 32)
    orders = int(values.get("random_orders") or 4)
    passes = 2 * steps + orders * (MAX_POINTS + PASSES_PER_CHECK) + tokens + 8
    kind = "decoder_tokens" if task in ("next_token",) else "encoder_tokens"
    return Cost(mb=300 + tokens * 4, s=1.0 + speeds.seconds(kind, passes * tokens), what="these explanations",
                ask="Ask for fewer integrated-gradients steps or random orders, or a shorter text.")


CONTRACTS = {
    "attribute": Contract({"text": Text("prompt"), "task": Choice(TASKS, optional=True), "labels": Json(5_000, 2, 64),
                           "label": Free(2_000), "target": Free(200), "contrast": Free(200), "word": Free(200),
                           "methods": Many(max_items=8, item=Free(60)),
                           "steps": Int(0, MAX_STEPS, optional=True), "random_orders": Int(0, MAX_RANDOM_ORDERS, True),
                           "question": Text("question", optional=True), "model_box": Free(1000)}, _cost),
}
