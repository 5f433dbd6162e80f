"""Chapter 4's contracts (backend/runtime/contract.py): the default run's table (read from the cache), a
sentence tagged by a model trained here, and a learner's own short run (stoppable between steps)."""

from __future__ import annotations

from backend.multilingual.api import RUN_NAMES
from backend.multilingual.learner import MAX_STEPS
from backend.engines.ner.languages import LANGUAGE_NAMES
from backend.runtime import speeds
from backend.runtime.contract import SMALL, Choice, Contract, Cost, Int, Many, Text

STEP_TOKENS = 16 * 48  # a training step: 16 sentences of up to 48 pieces, forward and backward


def _tag_cost(values: dict) -> Cost:
    n = len(values.get("text") or "")
    return Cost(mb=128, s=1.0 + speeds.seconds("e5_tokens", n), what="tagging this sentence")


def _train_cost(values: dict) -> Cost:
    step = 3 * speeds.seconds("e5_tokens", STEP_TOKENS)
    return Cost(mb=900, s=int(values.get("steps") or 1) * step, stoppable=True, step_s=step,
                what="this training run", ask="Ask for fewer steps.")


CONTRACTS = {
    "multilingual_ner_transfer": Contract({}, SMALL),
    "multilingual_ner": Contract({"text": Text("text"), "run": Choice(tuple(RUN_NAMES), optional=True)}, _tag_cost),
    "multilingual_ner_train": Contract({"languages": Many(tuple(LANGUAGE_NAMES), max_items=len(LANGUAGE_NAMES)),
                                        "steps": Int(1, MAX_STEPS)}, _train_cost),
}
