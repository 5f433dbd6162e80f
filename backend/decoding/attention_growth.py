"""Attention while generating: what each new token's step looked at, as a growing heatmap.

    out = attention_growth(model, tokenizer, prompt, n=16, layer=-1, head=None)   # None: mean over heads

A greedy generation of up to MAX_NEW tokens, then ONE forward over the final sequence with
`output_attentions=True`. Row i is the attention of the position that chose generated token i
(the token before it: the last prompt token for the first one) over every token up to there.
For a causal model that row is exactly what the step-by-step generation computed when it chose
token i: the causal mask means no position ever sees a later one, so appending tokens changes
none of the earlier rows (tests/unit/backend/decoding/test_attention_growth.py checks it against the rows taken
step by step with the KV cache). Cells to the right of the diagonal are `None` (not yet written).
"""

from __future__ import annotations

from typing import Any

import torch

from backend.decoding.by_hand import continue_path, eos_ids, parse_path
from backend.engines.attention.extract import readable_tokens
from backend.engines.generation.result import rounded
from backend.engines.generation.setup import build_prompt
from backend.engines.generation.settings import DecodeSettings
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int

MAX_NEW = 32
MAX_TOKENS = 256  # prompt + new: every layer's attention is held once (layers x heads x 256 x 256 floats)


def check_request(n: Any, layer: Any, head: Any) -> tuple[int, int, int | None]:
    n = as_int("n", 16 if n is None else n, lo=1, hi=MAX_NEW)
    layer = as_int("layer", -1 if layer is None else layer, lo=-1000, hi=1000)
    if head is None or (isinstance(head, str) and head.strip().lower() in ("", "mean")):
        head = None
    else:
        head = as_int("head", head, "a head number, or -1 / 'mean' for the mean over heads", lo=-1, hi=1000)
        head = None if head == -1 else head
    return n, layer, head


def attentions(model, ids: list[int]) -> tuple[torch.Tensor, ...]:
    """Every layer's attention [heads, query, key] for one forward over `ids`."""
    x = torch.tensor([ids], device=model.device)
    with torch.inference_mode():
        out = model(input_ids=x, output_attentions=True)
    atts = getattr(out, "attentions", None)
    if not atts or atts[0] is None:
        raise InputError("This model returned no attention weights; it must be loaded with "
                         "attn_implementation='eager' (SDPA and flash attention do not return them).")
    return tuple(a[0].float() for a in atts)


def pick(att: torch.Tensor, head: int | None) -> torch.Tensor:
    """[query, key] of one head, or the mean over heads."""
    return att.mean(0) if head is None else att[head]


def attention_growth(model, tokenizer, prompt: str, n: Any = 16, layer: Any = -1, head: Any = None,
                     path: Any = None, chat_template: bool = False) -> dict:
    """Greedy for `n` tokens (or the given `path` of token ids/strings), and each new token's
    attention row at `layer` (negative counts from the end) for `head` (None: the mean)."""
    n, layer, head = check_request(n, layer, head)
    vocab = int(model.get_output_embeddings().weight.shape[0])
    given = parse_path(tokenizer, path, vocab)
    settings = DecodeSettings(max_new_tokens=MAX_NEW, chat_template=bool(chat_template))
    prompt_text, prompt_ids, warnings = build_prompt(tokenizer, prompt, settings, MAX_TOKENS)
    new = given[:MAX_NEW] if given else continue_path(model, prompt_ids, n, eos_ids(model, tokenizer))
    ids = prompt_ids + new
    atts = attentions(model, ids)
    n_layers, n_heads = len(atts), int(atts[0].shape[0])
    if not -n_layers <= layer < n_layers:
        raise InputError(f"layer must be between 0 and {n_layers - 1} (or -1 for the last), got {layer}.")
    if head is not None and not 0 <= head < n_heads:
        raise InputError(f"head must be between 0 and {n_heads - 1}, or -1 / 'mean' for the mean, got {head}.")
    grid = pick(atts[layer], head).cpu()
    plen, total = len(prompt_ids), len(ids)
    rows = []
    for i in range(len(new)):
        q = plen + i - 1  # the position whose output chose generated token i
        rows.append([rounded(float(grid[q, k]), 6) if k <= q else None for k in range(total)])
    return {
        "prompt_text": prompt_text, "prompt_len": plen, "token_ids": ids, "tokens": readable_tokens(tokenizer, ids),
        "generated": new, "text": tokenizer.decode(new, skip_special_tokens=True), "rows": rows,
        "layer": layer % n_layers, "head": "mean" if head is None else head,
        "num_layers": n_layers, "num_heads": n_heads, "source": "path" if given else "greedy",
        "warnings": warnings,
        "note": ("Row i: the attention of the position that chose generated token i (the token before it) over "
                 "every token up to there, from one forward over the final text; for a causal model this is "
                 "exactly what the model computed at that step."),
    }

