"""Summarisation and translation with an encoder-decoder's `generate` (BART, Marian, T5).

transformers 5 removed the summarization / translation / text2text pipelines; this is what
they did: tokenise the source (truncated to the encoder's window, with a notice), call
`generate` with the decoding settings, decode. A checkpoint's own defaults
(`task_specific_params`, e.g. distilbart-cnn's beam size and lengths) are the starting point.
"""

from __future__ import annotations

import re

import torch

from backend.runtime import budget
from backend.engines.generation.generate import early_finish, stopping_criteria
from backend.engines.generation.prefill import shape_of
from backend.runtime.memory_budget import check_generation
from backend.engines.tasks.text import device_of, model_max_length, truncation_notice

LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "nl": "Dutch", "pt": "Portuguese", "ru": "Russian", "zh": "Chinese", "ja": "Japanese",
    "ar": "Arabic", "sv": "Swedish", "pl": "Polish", "ro": "Romanian",
}
_GEN_KEYS = ("num_beams", "do_sample", "temperature", "top_k", "top_p", "repetition_penalty",
             "no_repeat_ngram_size", "length_penalty", "max_new_tokens", "min_new_tokens", "seed")


def language_pair(model, tokenizer, checkpoint: str = "") -> tuple[str | None, str | None]:
    """(source, target) ISO codes of a translation model, from its tokenizer or its name."""
    src = getattr(tokenizer, "source_lang", None)
    tgt = getattr(tokenizer, "target_lang", None)
    if src and tgt:
        return str(src), str(tgt)
    m = re.search(r"opus-mt-([a-z]{2,3})-([a-z]{2,3})\b", checkpoint or "")
    if m:
        return m.group(1), m.group(2)
    params = getattr(model.config, "task_specific_params", None) or {}
    for key in params:
        m = re.match(r"translation_([a-z]{2})_to_([a-z]{2})$", key)
        if m:
            return m.group(1), m.group(2)
    return None, None


def _task_defaults(model, task_key: str) -> dict:
    params = getattr(model.config, "task_specific_params", None) or {}
    return dict(params.get(task_key, {}) or {})


def seq2seq_generate(
    model,
    tokenizer,
    text: str,
    task_key: str = "summarization",
    settings: dict | None = None,
) -> dict:
    """Run `generate` on one source text -> {text, input_tokens, output_tokens, notices, settings}.

    `settings` are generate() keyword arguments (num_beams, max_new_tokens, min_new_tokens,
    do_sample, temperature, top_k, top_p, repetition_penalty, no_repeat_ngram_size, seed).
    """
    defaults = _task_defaults(model, task_key)
    prefix = defaults.pop("prefix", "") or ""
    gen: dict = {}
    # The checkpoint's own defaults, renamed to the new-token arguments.
    if "num_beams" in defaults:
        gen["num_beams"] = defaults["num_beams"]
    if "no_repeat_ngram_size" in defaults:
        gen["no_repeat_ngram_size"] = defaults["no_repeat_ngram_size"]
    if "length_penalty" in defaults:
        gen["length_penalty"] = defaults["length_penalty"]
    for key, value in (settings or {}).items():
        if key in _GEN_KEYS and value is not None:
            gen[key] = value
    seed = gen.pop("seed", None)
    if not gen.get("do_sample"):
        for key in ("temperature", "top_k", "top_p"):
            gen.pop(key, None)
    if gen.get("num_beams", 1) > 1 and gen.get("do_sample"):
        gen["num_beams"] = 1  # beam sampling is not offered; sampling wins
    gen.setdefault("max_new_tokens", 128)
    if gen.get("min_new_tokens", 0) and gen["min_new_tokens"] > gen["max_new_tokens"]:
        gen["min_new_tokens"] = gen["max_new_tokens"]

    limit = model_max_length(model, tokenizer)
    notices = []
    full = tokenizer(prefix + text, add_special_tokens=True)["input_ids"]
    if len(full) > limit:
        notices.append(truncation_notice(len(full), limit))
    enc = tokenizer(prefix + text, truncation=True, max_length=limit, return_tensors="pt")
    enc = {k: v.to(device_of(model)) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
    if seed is not None and gen.get("do_sample"):
        torch.manual_seed(int(seed))
    width = int(gen.get("num_beams") or 1)
    check_generation(shape_of(model), 1, int(gen["max_new_tokens"]), width, width > 1,
                     source=int(enc["input_ids"].shape[1]), what="This generation")
    budget.check("nothing generated yet", "Ask for a shorter text or fewer new tokens.")
    with torch.inference_mode():
        out = model.generate(**enc, **gen, stopping_criteria=stopping_criteria())
    ids = out[0]
    text_out = tokenizer.decode(ids, skip_special_tokens=True).strip()
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    early = early_finish()
    if early:  # stopped at the deadline (or a cancel): the text so far
        notices.append(f"Generation stopped early ({early}): the text so far is shown.")
    return {
        "finish_reason": early or "done",
        "text": text_out,
        "input_tokens": min(len(full), limit),
        "output_tokens": sum(1 for t in ids.tolist() if t not in special),
        "notices": notices,
        "settings": {k: (v if isinstance(v, (int, float, bool, str)) else str(v)) for k, v in gen.items()},
    }
