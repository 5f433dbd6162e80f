"""The Decoding tab's contracts (backend/runtime/contract.py): the settings validated by the one decoding
validator (`parse_settings`, `parse_strategies`), and their cost at this server's speed."""

from __future__ import annotations

from backend.decoding import attention_growth, by_hand
from backend.engines.generation.settings import (MAX_BEAMS, MAX_COMPARE_WORK, MAX_NEW_TOKENS_CAP, MAX_TOP_N,
                                                 check_prefill, parse_settings, parse_strategies)
from backend.engines.server import generation as remote
from backend.hub import sizing
from backend.runtime.contract import PLAN, SMALL, Choice, Contract, Cost, Flag, Free, Int, Json, Scalar, Text
from backend.runtime.errors import InputError

ROLE = "decoder"
PATH_CHARS = 20_000  # a path of MAX_PATH token ids or single-token strings, as JSON


def _width(s) -> int:
    return max(int(s.num_beams if s.strategy == "beam" else s.num_return_sequences or 1), 1)


def _one(prompt, settings, model=None, plan=None) -> Cost:
    """One decode's cost: nothing here when its plan (admission's; else, for a comparison's strategy, the
    generation server's own rule) sends it to the generation server."""
    s = parse_settings(settings)  # an InputError names the setting, as the handler would
    on_server = (plan.on_server and not plan.long) if plan is not None else remote.plan(ROLE, s, model)[0] is not None
    if on_server:
        return SMALL
    n = sizing.tokens(ROLE, prompt, model)
    check_prefill(s, n)  # too many token-rows (prompt x sequences): the decoder's own refusal, in its words
    return sizing.generation_cost(ROLE, n + 16, s.max_new_tokens, _width(s), s.strategy == "beam", model,
                                  keep_logits=True, what="this decode")


def decode_cost(values: dict) -> Cost:
    return _one(values.get("prompt"), values.get("settings"), plan=values.get(PLAN))


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


def _most_settings(valid):
    """The costliest single decode the settings allow: the most beams for the most new tokens."""
    return {"strategy": "beam", "num_beams": MAX_BEAMS, "max_new_tokens": MAX_NEW_TOKENS_CAP, "top_n": MAX_TOP_N}


def _most_strategies(valid):
    """The costliest comparison under MAX_COMPARE_WORK: beams and samples for the most new tokens."""
    per = MAX_COMPARE_WORK // (2 * MAX_NEW_TOKENS_CAP)
    return [{"strategy": "beam", "num_beams": per, "max_new_tokens": MAX_NEW_TOKENS_CAP},
            {"strategy": "sample", "num_return_sequences": per, "max_new_tokens": MAX_NEW_TOKENS_CAP, "seed": 1}]


SETTINGS = Json(max_chars=4_000, max_depth=2, extreme=_most_settings)
CONTRACTS = {
    "decode": Contract({"prompt": Text("prompt"), "settings": SETTINGS}, decode_cost),
    "compare_decoding": Contract({"prompt": Text("prompt"), "strategies": Json(16_000, 3, extreme=_most_strategies)},
                                 compare_cost),
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


# The page's own events (private, but a stranger may call them by fn_index): the Decoding run's widgets, each a
# setting; the comparison's JSON box.
PAGE_SETTINGS = ("strategy", "max_new_tokens", "temperature", "top_k", "top_p", "num_beams", "length_penalty",
                 "no_repeat_ngram_size", "early_stopping", "num_return_sequences", "repetition_penalty", "seed",
                 "chat_template", "top_n", "precision")


def page_run_cost(values: dict) -> Cost:
    settings = {k: values.get(k) for k in PAGE_SETTINGS if values.get(k) not in (None, "")}
    return _one(values.get("prompt"), settings, (values.get("model") or "").strip() or None, values.get(PLAN))


PAGE_CONTRACTS = {
    "run": Contract({"prompt": Text("prompt"), **{k: Scalar(40) for k in PAGE_SETTINGS}, "temps_text": Free(200),
                     "model": Free(1000)}, page_run_cost),
    "compare": Contract({"prompt": Text("prompt"), "strategies_text": Json(16_000, 3),
                         "model": Free(1000)},
                        lambda v: compare_cost({"prompt": v.get("prompt"), "strategies": v.get("strategies_text")})),
}
