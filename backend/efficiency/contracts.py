"""Chapter 8's contracts (backend/runtime/contract.py). /efficiency decodes each prompt twice (fp32, int8) and
scores each text twice: a half-done comparison compares nothing, so the whole must fit the budget. A live
/compress run keeps each finished step and stops between them (stoppable)."""

from __future__ import annotations

from backend.efficiency.api import AGREE_SHORT, MAX_ITEMS
from backend.efficiency.compress.api import RUNS, THROUGH
from backend.runtime import speeds
from backend.runtime.contract import SMALL, Choice, Contract, Cost, Flag, Free, Int, Num, Text

TEXT_TOKENS = 200  # a shipped perplexity text, about
COMPRESS_STEP_S = 6.0  # one distillation batch, teacher and student, at most (bench/results/compress.md)


def _efficiency(values: dict) -> Cost:
    steps = 2 * int(values.get("prompts") or 1) * int(values.get("new_tokens") or AGREE_SHORT)
    reading = 2 * int(values.get("texts") or 1) * TEXT_TOKENS
    s = 5.0 + steps / speeds.per_s("decoder_steps") + speeds.seconds("decoder_tokens", reading)
    if values.get("encoder"):
        s += 3 * speeds.seconds("encoder_tokens", 2 * int(values.get("texts") or 1) * TEXT_TOKENS) + 3
    return Cost(mb=700, s=s, what="this fp32 / int8 comparison",
                ask="Ask for fewer prompts or new tokens (the time grows with prompts x new tokens).")


def _compress(values: dict) -> Cost:
    if (values.get("run") or "default") == "default":
        return SMALL
    return Cost(mb=900, s=int(values.get("epochs") or 3) * 30.0, stoppable=True, step_s=COMPRESS_STEP_S,
                what="this live compression run")


CONTRACTS = {
    "efficiency": Contract({"prompts": Int(1, MAX_ITEMS), "texts": Int(1, MAX_ITEMS), "new_tokens": Int(AGREE_SHORT, 64),
                            "encoder": Flag()}, _efficiency),
    "compress": Contract({"run": Choice(RUNS, optional=True), "temperature": Num(0.5, 20.0), "alpha": Num(0.0, 1.0),
                          "layers": Int(1, 5), "sparsity": Num(0.05, 0.95), "through": Choice(THROUGH, optional=True),
                          "epochs": Int(1, 6, optional=True)}, _compress),
    "compress_predict": Contract({"text": Text("text"), "run_id": Free(200)},
                                 lambda v: Cost(mb=200, s=2 + 8 * speeds.seconds("encoder_tokens", len(v.get("text") or "")))),
    "compress_download": Contract({"variant": Free(200), "run_id": Free(200)}, Cost(mb=200, s=5, what="writing the zip")),
}
