"""The From scratch and chapter 11 contracts (backend/runtime/contract.py). A run trained from scratch is
priced by the same plan that words its refusal (`plan_gpt`, `plan_seq2seq`, `plan_size`), asked at the door
instead of after the lane; a tiny model's step is milliseconds, so the budget ends a run at its limit."""

from __future__ import annotations

from backend.engines.attention.extract import ROLES
from backend.engines.scratch.corpora import MAX_CHARS
from backend.engines.scratch.tiny_gpt import SCHEMES
from backend.hub import sizing
from backend.runtime import speeds
from backend.runtime.contract import SMALL, Choice, Contract, Cost, Free, Int, Num, Text, Upload
from backend.scratch import gpt_api, scaling_api, seq2seq_api, trained_run
from backend.scratch.api import MAX_SENTENCE, MAX_VOCAB, MIN_VOCAB
from backend.scratch.attention_cost_api import LIVE_MAX_TOKENS, SPARSE_MAX_TOKENS, lengths_up_to

ATTENTION_FLOPS = 1.0e9  # written-out attention on one shared core, float32 (bench/results/attention_cost.md)
METHODS_TIMED = 4  # full, fused, sliding window, linear
GEOMETRY = {"encoder": (12, 32), "decoder": (9, 64)}  # heads, head size of the local profile's models


def _gpt(values: dict) -> Cost:
    plan = gpt_api.plan_gpt(values.get("tokens") or "bytes", values.get("vocab_size"), values.get("steps"),
                            values.get("layers"), values.get("heads"), values.get("width"),
                            learning_rate=values.get("learning_rate"), seed=values.get("seed") or 0)
    trained_run.refuse_unless_fits(plan, "model", "fewer layers, a smaller width or context")
    step = plan["seconds"] / max(1, plan["steps"])
    return Cost(mb=300, s=plan["seconds"], stoppable=True, step_s=step, what="this training run")


def _seq2seq(values: dict) -> Cost:
    plan = seq2seq_api.plan_seq2seq(values.get("steps"), values.get("layers"), values.get("heads"), values.get("width"),
                                    learning_rate=values.get("learning_rate"), seed=values.get("seed") or 0)
    trained_run.refuse_unless_fits(plan, "encoder-decoder", "fewer layers, a smaller width")
    return Cost(mb=300, s=plan["seconds"], stoppable=True, step_s=plan["seconds"] / max(1, plan["steps"]),
                what="this training run")


def _scaling_add(values: dict) -> Cost:
    """A size trained by a fixed amount of work: a run cut short lands nowhere on the line, so all of it must
    fit; the family's own rate was measured alone at set-up, this server shares its cores."""
    plan = scaling_api.plan_size(values.get("layers"), values.get("width"))
    return Cost(mb=400, s=plan["seconds"] / speeds.SHARED_CORES, what=f"training {plan['layers']} layers x "
                f"{plan['width']} ({plan['parameters']:,} parameters)", ask="Choose fewer layers or a smaller width.")


def _attention_cost(values: dict) -> Cost:
    role = values.get("role") if values.get("role") in ROLES else "encoder"
    heads, head_dim = GEOMETRY[role]
    lengths = lengths_up_to(int(values.get("max_tokens") or 1024))
    per_length = [3 * METHODS_TIMED * heads * t * t * head_dim * 4 / ATTENTION_FLOPS for t in lengths]
    return Cost(mb=heads * max(lengths) ** 2 * 4 * 4 / 2**20 + 100, s=sum(per_length), stoppable=True,
                step_s=per_length[-1] / METHODS_TIMED, what="timing attention at these lengths",
                ask="Choose a shorter longest text.")


def _sparse(values: dict) -> Cost:
    role = values.get("role") if values.get("role") in ROLES else "encoder"
    sizing.tokens_at_most(role, [values.get("text")], SPARSE_MAX_TOKENS, "the sparse-attention comparison")
    return Cost(mb=200, s=3, what="this comparison")


ROLE_NAME = Free(40)  # the entry point words an unknown role itself ("Role must be 'encoder' or 'decoder'")
CONTRACTS = {
    "train_tokenizer": Contract({"algorithm": Choice(("BPE", "WordPiece", "Unigram"), optional=True),
                                 "vocab_size": Int(MIN_VOCAB, MAX_VOCAB), "corpus": Free(100),
                                 "text": Text("paste", extreme=lambda valid, cap: "w " * (MAX_CHARS // 2)),
                                 "upload": Upload(), "sentence": Free(MAX_SENTENCE * 20)},
                                Cost(mb=400, s=8, what="training this tokenizer")),
    "train_gpt": Contract({"steps": Int(*gpt_api.LIMITS["steps"]), "layers": Int(*gpt_api.LIMITS["layers"]),
                           "width": Int(*gpt_api.LIMITS["width"]), "heads": Int(*gpt_api.LIMITS["heads"]),
                           "learning_rate": Num(1e-5, 0.1), "seed": Int(*gpt_api.LIMITS["seed"], optional=True),
                           "tokens": Choice(SCHEMES, optional=True), "corpus": Free(100),
                           "text": Text("paste", extreme=lambda valid, cap: "w " * (MAX_CHARS // 2)),
                           "upload": Upload(), "vocab_size": Int(0, gpt_api.LIMITS["vocab_size"][1], optional=True)},
                          _gpt),
    "download_gpt": Contract({}, Cost(mb=100, s=3, what="writing the model's zip")),
    "train_seq2seq": Contract({"steps": Int(*seq2seq_api.LIMITS["steps"]), "layers": Int(*seq2seq_api.LIMITS["layers"]),
                               "width": Int(*seq2seq_api.LIMITS["width"]), "heads": Int(*seq2seq_api.LIMITS["heads"]),
                               "learning_rate": Num(1e-5, 0.1), "seed": Int(*seq2seq_api.LIMITS["seed"], optional=True)},
                              _seq2seq),
    "translate_toy": Contract({"text": Free(seq2seq_api.MAX_INPUT_CHARS * 10), "layer": Int(-100, 100, optional=True),
                               "head": Int(-100, 100, optional=True)}, SMALL),
    "download_seq2seq": Contract({}, Cost(mb=100, s=3, what="writing the model's zip")),
    "scaling_law": Contract({}, SMALL),
    "scaling_add": Contract({"layers": Int(*scaling_api.LAYER_LIMITS), "width": Int(*scaling_api.WIDTH_LIMITS)},
                            _scaling_add),
    "attention_cost": Contract({"role": ROLE_NAME, "max_tokens": Int(256, LIVE_MAX_TOKENS),
                                "window": Int(1, 512)}, _attention_cost, suite={"role": "decoder"}),
    "sparse_attention": Contract({"text": Text("attention"), "role": ROLE_NAME,
                                  "layer": Int(-10**6, 10**6, optional=True), "head": Int(-10**6, 10**6, optional=True),
                                  "window": Int(1, 256), "block": Int(2, 128), "global_tokens": Int(0, 32),
                                  "random_blocks": Int(0, 8)}, _sparse),
}
