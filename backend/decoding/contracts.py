"""The Decoding tab's contracts (backend/runtime/contract.py): the settings validated by the one decoding
validator (`parse_settings`, `parse_strategies`), and their cost at this server's speed."""

from __future__ import annotations

from backend.decoding import attention_growth, by_hand
from backend.engines.generation.settings import MAX_COMPARE, parse_settings, parse_strategies
from backend.engines.server import generation as remote
from backend.hub import sizing
from backend.runtime.contract import SMALL, Choice, Contract, Cost, Flag, Int, Json, Scalar, Text
from backend.runtime.errors import InputError

ROLE = "decoder"
PATH_CHARS = 20_000  # a path of MAX_PATH token ids or single-token strings, as JSON


def _width(s) -> int:
    return max(int(s.num_beams if s.strategy == "beam" else s.num_return_sequences or 1), 1)


def _one(prompt, settings, model=None) -> Cost:
    s = parse_settings(settings)  # an InputError names the setting, as the handler would
    eng, _ = remote.plan(ROLE, s, model)
    if eng is not None:
        return SMALL
    n = sizing.tokens(ROLE, prompt, model) + 16
    return sizing.generation_cost(ROLE, n, s.max_new_tokens, _width(s), s.strategy == "beam", model,
                                  keep_logits=True, what="this decode")


def decode_cost(values: dict) -> Cost:
    return _one(values.get("prompt"), values.get("settings"))


def compare_cost(values: dict) -> Cost:
    """Strategies run one after another: their times add; memory is the largest one's. A row cut short by the
    budget is no comparison, so the whole must fit the budget."""
    strategies = values.get("strategies")
    settings = parse_strategies(strategies) if strategies is not None else None
    if settings is None:
        return SMALL
    costs = [_one(values.get("prompt"), s, None) for s in settings]
    return Cost(mb=max(c.mb for c in costs), s=sum(c.s for c in costs), what=f"these {len(costs)} strategies",
                ask="Compare fewer strategies, or ask for fewer new tokens or beams.")


def by_hand_cost(values: dict) -> Cost:
    """Each step re-scores the prompt and path (MAX_PATH tokens at most): a few forwards of the prompt."""
    n = sizing.tokens(ROLE, values.get("prompt")) + by_hand.MAX_PATH
    steps = 1 + (int(values.get("n") or 0) if values.get("action") in ("greedy", "sample") else 0)
    return sizing.generation_cost(ROLE, n, steps, what="this decode by hand")


def growth_cost(values: dict) -> Cost:
    n = sizing.tokens(ROLE, values.get("prompt"))
    if n + int(values.get("n") or 0) > attention_growth.MAX_TOKENS + 64:
        raise InputError(f"The prompt is {n:,} tokens; attention while generating is shown for at most "
                         f"{attention_growth.MAX_TOKENS} tokens (prompt and new). Shorten it.")
    return sizing.generation_cost(ROLE, n, int(values.get("n") or 1), what="this generation")


def _longest_path(valid):
    return [" the"] * by_hand.MAX_PATH


SETTINGS = Json(max_chars=4_000, max_depth=2)
CONTRACTS = {
    "decode": Contract({"prompt": Text("prompt"), "settings": SETTINGS}, decode_cost),
    "compare_decoding": Contract({"prompt": Text("prompt"), "strategies": Json(max_chars=16_000, max_depth=3,
                                                                               max_items=MAX_COMPARE)}, compare_cost),
    "decode_by_hand": Contract({"prompt": Text("prompt"), "path": Json(PATH_CHARS, 2, by_hand.MAX_PATH, _longest_path),
                                "top_k": Int(1, by_hand.MAX_TOP_K, optional=True),
                                "action": Choice(by_hand.ACTIONS, optional=True),
                                "n": Int(1, by_hand.MAX_CONTINUE, optional=True),
                                "seed": Int(0, 2**63 - 1, optional=True), "chat_template": Flag()}, by_hand_cost),
    "generation_attention": Contract({"prompt": Text("prompt"), "n": Int(1, attention_growth.MAX_NEW, optional=True),
                                      "layer": Int(-1000, 1000, optional=True), "head": Scalar(40),
                                      "path": Json(PATH_CHARS, 2, by_hand.MAX_PATH), "chat_template": Flag()},
                                     growth_cost),
}
