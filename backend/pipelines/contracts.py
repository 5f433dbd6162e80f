"""The Pipelines tab's contracts (backend/runtime/contract.py): each endpoint's argument ranges, from the
same limits its entry point checks, and its cost at this server's speed, priced before it waits in a lane."""

from __future__ import annotations

from backend import hub
from backend.engines.generation.settings import MAX_BEAMS as DECODE_MAX_BEAMS, MAX_NEW_TOKENS_CAP, check_prefill, parse_settings
from backend.hub import sizing
from backend.pipelines import decoder_mask, tasks
from backend.pipelines.api import QA_METHODS, STRATEGIES
from backend.pipelines.encoders import AGGREGATIONS, MAX_TOP_K
from backend.pipelines.seq2seq import LANGUAGE_NAMES
from backend.runtime import config, speeds
from backend.runtime.config import get_settings
from backend.runtime.contract import PLAN, SMALL, Choice, Contract, Cost, Flag, Free, Int, Num, Text
from backend.runtime.errors import InputError

MODEL_BOX = Free(1000)  # the hub words a refusal over config.MAX_OVERRIDE_CHARS itself
PROMPT_OVERHEAD = 80  # the instruct fallback's task prompt around the text (chat template, instruction)


def _role_arg(values: dict, key: str = "model_box") -> str | None:
    v = values.get(key)
    return v.strip() or None if isinstance(v, str) else None


def encoder_cost(role: str, texts: list, override: str | None = None, passes: int = 1, what: str = "") -> Cost:
    """Encoder work over `texts` (read in windows of at most 512 tokens), `passes` times."""
    n = sum(sizing.tokens(role, t, override) for t in texts if t)
    return Cost(mb=64 + n * 0.05, s=0.2 + speeds.seconds("encoder_tokens", n * passes), what=what or "reading the text",
                ask="Send a shorter text.")


def _lines(text, batch) -> list:
    return [line for line in str(text or "").splitlines() if line.strip()] if batch else [text or ""]


def on_server(values: dict) -> bool:
    """Does the request's one plan (made at admission) send its generation to the generation server? Its cost
    there is the server's, not this process's."""
    plan = values.get(PLAN)
    return plan is not None and plan.on_server and not plan.long


def _seq2seq_cost(task: str, values: dict, new_key: str = "max_new_tokens") -> Cost:
    override = _role_arg(values)
    if on_server(values):
        return SMALL
    role = config.TASK_ROLES[task]
    prompt = sizing.tokens(role, values.get("text"), override) + PROMPT_OVERHEAD
    width = max(1, int(values.get("num_beams") or 1))
    return sizing.generation_cost(role, prompt, int(values.get(new_key) or 1), width, width > 1, override,
                                  keep_logits=True, what=f"this {'summary' if task == 'summarize' else 'translation'}")


def _generate_cost(values: dict) -> Cost:
    override = _role_arg(values)
    strategy = values.get("strategy") or "greedy"
    width = int(values.get("num_beams") or 1) if strategy == "beam" else 1
    if on_server(values):
        return SMALL
    prompt = sizing.tokens("text_generation", values.get("prompt"), override)
    settings = {k: values.get(k) for k in ("strategy", "max_new_tokens", "num_beams") if values.get(k) is not None}
    check_prefill(parse_settings(settings), prompt)  # too many token-rows: the decoder's own refusal, in its words
    return sizing.generation_cost("text_generation", prompt, int(values.get("max_new_tokens") or 1), width,
                                  strategy == "beam", override, what="this generation")


def fill_mask_cost(values: dict) -> Cost:
    """A masked LM reads the text once. The decoder (local profile) reads the left context once, then each of
    max(top_k, 20) candidates with the whole right context: that product is the work, and it cannot stop
    midway with a useful answer, so all of it must fit the budget."""
    override = _role_arg(values)
    text = values.get("text") or ""
    try:
        left, right = decoder_mask.split_mask(text)
    except InputError:
        return SMALL  # the entry point names the missing or extra mask
    if hub.get_hub().resolve("fill_mask", override).method != config.METHOD_DECODER_MASK:
        return encoder_cost("fill_mask", [text], override, what="filling the mask")
    n = max(decoder_mask.N_CANDIDATES, int(values.get("top_k") or 1))
    left_n, right_n = sizing.tokens("fill_mask", left, override), sizing.tokens("fill_mask", right, override)
    work = left_n + n * (1 + right_n)
    budget_s = float(get_settings().time_budget_s)
    readable = budget_s * speeds.per_s("decoder_tokens") if budget_s > 0 else float("inf")  # tokens in the budget
    most_right = int((readable - left_n) / n - 1) if readable < work else right_n
    most_k = int((readable - left_n) / (1 + right_n)) if readable < work else n
    ways = ([f"at most {most_right:,} tokens after the mask"] if most_right >= 1 else [])
    ways += [f"top_k of at most {most_k}"] if decoder_mask.N_CANDIDATES <= most_k < n else []
    rows = min(decoder_mask.scoring_rows(sizing.shape("fill_mask", override), left_n, right_n), n)
    return Cost(mb=decoder_mask.scoring_bytes(sizing.shape("fill_mask", override), left_n, right_n, rows) / 2**20,
                s=speeds.seconds("decoder_tokens", work),
                what=f"scoring {n} candidates against the {right_n:,} tokens after the mask ({work:,} tokens of reading)",
                ask=("Ask for " + " or ".join(ways) + "." if ways else "Send a shorter text.")
                + f" (At least {decoder_mask.N_CANDIDATES} candidates are always scored.)")


def qa_cost(values: dict) -> Cost:
    override = _role_arg(values)
    box = (override or "").lower()
    if box == "span-decoding" or hub.get_hub().resolve("qa", None if box in QA_METHODS else override).method \
            == config.METHOD_SPAN:
        n = sizing.tokens("decoder", values.get("context"))
        return Cost(mb=256, s=speeds.seconds("decoder_tokens", 3 * n) + 2, what=f"{config.method_name(config.METHOD_SPAN)} over this context",
                    ask="Send a shorter context.")
    texts = [values.get("context"), values.get("question")]
    role_override = None if box in QA_METHODS else override
    return encoder_cost("qa", texts, role_override, passes=2, what="reading this context")


CONTRACTS = {
    "classify": Contract({"text": Text("text"), "batch": Flag(), "label_descriptions": Text("label_descriptions"),
                          "model_box": MODEL_BOX},
                         lambda v: encoder_cost("sentiment", _lines(v.get("text"), v.get("batch")), _role_arg(v))),
    "zero_shot": Contract({"text": Text("text"), "labels": Text("labels"), "multi_label": Flag(),
                           "template": Free(500), "batch": Flag(), "model_box": MODEL_BOX},
                          lambda v: encoder_cost("zero_shot", _lines(v.get("text"), v.get("batch")), _role_arg(v),
                                                 passes=max(1, str(v.get("labels") or "").count(",") + 1))),
    "ner": Contract({"text": Text("text"), "aggregation": Choice(AGGREGATIONS, optional=True), "batch": Flag(),
                     "model_box": MODEL_BOX},
                    lambda v: encoder_cost("ner", _lines(v.get("text"), v.get("batch")), _role_arg(v))),
    "qa": Contract({"context": Text("context"), "question": Text("question"), "top_n": Int(1, tasks.MAX_TOP_N),
                    "model_box": MODEL_BOX}, qa_cost),
    "summarize": Contract({"text": Text("text"), "max_new_tokens": Int(1, tasks.MAX_NEW_TOKENS),
                           "min_new_tokens": Int(0, tasks.MAX_NEW_TOKENS), "num_beams": Int(0, tasks.MAX_BEAMS),
                           "reference": Text("reference"), "model_box": MODEL_BOX},
                          lambda v: _seq2seq_cost("summarize", v)),
    "translate": Contract({"text": Text("text"), "source": Choice(tuple(LANGUAGE_NAMES), optional=True),
                           "target": Choice(tuple(LANGUAGE_NAMES), optional=True),
                           "max_new_tokens": Int(1, tasks.MAX_NEW_TOKENS), "num_beams": Int(0, tasks.MAX_BEAMS),
                           "reference": Text("reference"), "model_box": MODEL_BOX},
                          lambda v: _seq2seq_cost("translate", v)),
    "generate_text": Contract({"prompt": Text("prompt"), "strategy": Choice(STRATEGIES, optional=True),
                               "max_new_tokens": Int(1, MAX_NEW_TOKENS_CAP), "temperature": Num(0, 100, optional=True),
                               "top_k": Int(0, 10**6, optional=True), "top_p": Num(0, 1, optional=True),
                               "num_beams": Int(1, DECODE_MAX_BEAMS, optional=True), "seed": Int(0, 2**63 - 1, True),
                               "model_box": MODEL_BOX}, _generate_cost),
    "fill_mask": Contract({"text": Text("text"), "top_k": Int(1, MAX_TOP_K), "model_box": MODEL_BOX}, fill_mask_cost),
}
