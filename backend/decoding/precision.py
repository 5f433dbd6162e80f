"""Which weights generate (the served fp32 model or its int8 copy), and the other one's view.

An int8 run generates with the dynamically quantized copy from `backend.efficiency` (built once
per process and shared with the Efficiency panel; one copy per role). Afterwards ONE
teacher-forced forward of the fp32 model over the whole generated sequence gives its
probability of each chosen token: the step table shows both columns without a second
generation. An fp32 run is the plain path and costs nothing extra.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from backend.engines.generation.generate import score_sequence
from backend.engines.generation.result import prob, rounded
from backend.runtime import precision as rounding


@dataclass
class Served:
    """The model that generates, and the one that re-scores its tokens (None: no second column)."""

    model: Any
    name: str  # "fp32" | "int8"
    other: Any = None
    other_name: str | None = None
    built_s: float = 0.0  # seconds spent building the int8 copy for this request (0: cached)
    describe: dict | None = None


def serve(lm, precision: str, progress=None) -> Served:
    """The hub model `lm` as the run's `precision` asks: itself, or its cached int8 copy."""
    if precision != "int8":
        return Served(lm.model, "fp32", describe=lm.describe())
    from backend.engines.compression import quantize

    if progress is not None:
        progress(0.05, f"Quantizing {lm.checkpoint} to int8 (first use only)")
    start = time.perf_counter()
    q, built = quantize.int8_of(lm)
    described = dict(lm.describe())
    described.update(device="cpu", dtype="int8 (dynamic, per-channel) + fp32",
                     note=(f"{quantize.count_int8_linears(q)} Linear layers int8 (torch.ao dynamic quantization), "
                           "embeddings and norms fp32; the same copy the Efficiency tab measures"))
    # The column is called fp32: on a GPU the hub serves bf16/fp16, so the re-score runs on the served
    # weights' float32 twin (the same values the int8 copy was quantized from), not on rounded ones.
    return Served(q, "int8", other=rounding.float32_twin(lm.model), other_name="fp32",
                  built_s=time.perf_counter() - start if built else 0.0, describe=described)


def add_other(data: dict, served: Served) -> dict:
    """Put the other precision's per-step probability of each chosen token into a `/decode` payload.

    Each step gains `prob_<name>` for both precisions (the generating one's is its own `prob`),
    and the payload gains `precision`: which generated, which re-scored, the other's sequence
    log-prob and the largest per-step probability difference.
    """
    data["model"] = served.describe
    if served.other is None:
        data["precision"] = {"generated": served.name, "other": None}
        return data
    start = time.perf_counter()
    ids = data["outputs"][0]["token_ids"] if data["outputs"] else []
    n = len(data["steps"])
    plen = len(data["prompt_token_ids"])
    scored = score_sequence(served.other, data["prompt_token_ids"] + ids[:n], plen, top_n=1)
    diffs = []
    for step, lp in zip(data["steps"], scored["logprob"]):
        other = prob(lp)
        step[f"prob_{served.name}"] = step["prob"]
        step[f"prob_{served.other_name}"] = other
        diffs.append(abs(other - step["prob"]))
    if served.built_s:
        data["warnings"].append(f"The int8 copy of the model was built for this run ({served.built_s:.1f} s, "
                                "once per process).")
    data["precision"] = {
        "generated": served.name,
        "other": served.other_name,
        "other_sequence_logprob": rounded(sum(scored["logprob"]), 4),
        "max_abs_prob_diff": rounded(max(diffs), 6) if diffs else 0.0,
        "rescore_seconds": rounded(time.perf_counter() - start, 4),
        "int8_built_s": rounded(served.built_s, 2),
    }
    return data
