"""A chat reply from the generation server, in the shape `instruct.chat_generate` returns, so the
instruct fallbacks (summarization, translation) and the retriever-reader format either unchanged.

Why a module of its own: the prompt is the same chat template with the role's own tokenizer, sent
as token ids (`remote_generation.stream(prepared=...)`); only who runs the forward passes changes.
The fallbacks decode greedily with a repetition penalty of 1.1 and at least `min_new_tokens`;
vLLM applies both as transformers does (the penalty to prompt and output tokens alike), and the
server tier checks that the text is the same. What the server would run differently runs
in-process, and `in_process_reason` says why: beam search, sampling (each side has its own random
generator, so the same seed would give another text).

`mean_logprob` is the mean of the model's own (raw, before the penalty) log-probs of the reply's
tokens on both sides (`chat_generate` reads `output_logits`), so the two paths report one figure.
"""

from __future__ import annotations

import threading

from backend.engines.generation.settings import DecodeSettings
from backend.engines.tasks.instruct import chat_prompt
from backend.engines.server.generation import Server, check_tokenizer, decode

REPETITION_PENALTY = 1.1  # the fallbacks' default, as in instruct.chat_generate


def in_process_reason(gen: dict) -> str | None:
    """Why these generate() settings must run in-process (None: the server can run them)."""
    if int(gen.get("num_beams") or 1) > 1:
        return ("Beam search ran in-process: the instruct fallback on the server decodes greedily, and a beam "
                "search there would not be the one this app runs.")
    if gen.get("do_sample"):
        return ("Sampling ran in-process: the server draws with its own random generator, so a seed would not "
                "repeat this process's text.")
    return None


def chat(eng: Server, tokenizer, messages: list[dict], max_new_tokens: int = 96, *,
         stop_event: threading.Event | None = None, **gen) -> dict:
    """The server's greedy reply to `messages` -> {text, prompt_tokens, new_tokens, mean_logprob,
    finish_reason, warnings}; ServerUnavailable: run it in-process (`instruct.chat_generate`)."""
    settings = DecodeSettings.from_dict({
        "strategy": "greedy", "max_new_tokens": max_new_tokens,
        "min_new_tokens": int(gen.get("min_new_tokens") or 0),
        "repetition_penalty": float(gen.get("repetition_penalty") or REPETITION_PENALTY),
        "top_n": 1,
    })
    text, ids = chat_prompt(tokenizer, messages, max_new_tokens, eng.context_limit())
    unchecked = check_tokenizer(eng, tokenizer)  # cached; raises ServerUnavailable on another tokenizer
    res = decode(eng, tokenizer, text, settings, stop_event=stop_event, prepared=(text, ids, []),
                 candidates=1)  # the chosen token's log-prob is all a reply needs
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    new = res.outputs[0]["token_ids"] if res.outputs else []
    kept = [step["logprob"] for step in res.steps if step["token_id"] not in special]
    return {
        "text": tokenizer.decode(new, skip_special_tokens=True).strip(),
        "prompt_tokens": len(ids),
        "new_tokens": sum(1 for t in new if t not in special),
        "mean_logprob": sum(kept) / len(kept) if kept else float("nan"),
        "finish_reason": res.finish_reason,
        "generate_seconds": res.generate_seconds,
        "warnings": [unchecked] if unchecked else [],
    }
