"""The Decoding tab's snippet: the same `model.generate(...)` call, and one line on what the tab adds
(the step table or the beam tree are recorded inside that call; int8 is the app's own quantized copy)."""

from __future__ import annotations

from backend.snippets import generation
from backend.snippets.text import differing

# What each strategy reads; /decode takes DecodeSettings' defaults (generation.APP_DEFAULTS) for what is left out
READS = {"greedy": (), "sample": ("temperature", "top_k", "top_p", "seed"),
         "beam": ("num_beams", "length_penalty", "early_stopping")}
SHARED = ("no_repeat_ngram_size", "repetition_penalty", "num_return_sequences", "min_new_tokens", "chat_template",
          "top_n", "precision")


def client_settings(settings: dict) -> dict:
    """/decode's `settings` for the same run: the strategy, its length, and what the strategy reads that
    differs from what /decode takes by default (a script passes only what it needs)."""
    s = settings or {}
    strategy = s.get("strategy", generation.APP_DEFAULTS["strategy"])
    keys = [k for k in (*READS.get(strategy, ()), *SHARED) if k in s]
    return {"strategy": strategy, "max_new_tokens": s.get("max_new_tokens"),
            **differing({k: s[k] for k in keys}, generation.APP_DEFAULTS)}


def _adds(settings: dict) -> str:
    s = settings or {}
    what = ("the beam tree (the beams kept at each step)" if s.get("strategy") == "beam"
            else "the step table (each step's top candidates and their probabilities)")
    line = f"{what}, recorded by a LogitsProcessor tap inside this same generate call."
    if s.get("precision") == "int8":
        line += (" This run used the app's int8 copy: torch.ao.quantization.quantize_dynamic(model, "
                 "{torch.nn.Linear}, dtype=torch.qint8) with per-token activation scales, so the plain fp32 "
                 "call above may pick other tokens.")
    return line


def decode(inputs: dict, result: dict) -> str:
    s = result.get("settings") or {}
    prompt = inputs.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        prompt = result.get("prompt_text", "")
        s = {**s, "chat_template": False}  # the text the model saw, template included
    return generation.snippet(prompt, s, result.get("model") or {}, _adds(s))
