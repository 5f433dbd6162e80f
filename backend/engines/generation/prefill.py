"""The prompt's first forward in chunks, so that Stop, the time budget and memory reach it.

`model.generate` reads the whole prompt in one forward, once per beam or sample: no stopping
criterion runs inside it. A 4,500-token prompt with 8 beams held 8 x 9 x 4,500^2 float32 attention
scores per layer (5.8 GB) and ran for a minute after Stop. Here the prompt (all but its last token)
goes through the model PREFILL_CHUNK tokens at a time, at batch 1, into a key/value cache; the
request's budget is checked between chunks; the cache is then repeated for the beams or samples,
and `generate` continues from it (it reads only the tokens the cache does not hold). The tokens and
scores are the same as one `generate` call's: tests/unit/backend/engines/generation/test_generation_prefill.py checks greedy,
sampling and beams against plain `generate`.

    shape = shape_of(model)                                   # for memory_budget.check_generation
    cache = prefilled(model, input_ids, width, stop_event)    # None: nothing to prefill, or no cache
    model.generate(input_ids, past_key_values=cache, ...)
"""

from __future__ import annotations

import threading

import torch

from backend.runtime import budget as budgets
from backend.runtime.memory_budget import PREFILL_CHUNK, Shape


class PrefillStopped(Exception):
    """Stop, the time budget or the memory guard ended the prompt's forward before generation began."""


def shape_of(model) -> Shape:
    """The numbers a generation's memory depends on (backend.runtime.memory_budget.Shape)."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    heads = int(getattr(cfg, "num_attention_heads", None) or getattr(cfg, "decoder_attention_heads", None)
                or getattr(cfg, "n_head", 1))
    hidden = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "d_model", None) or getattr(cfg, "n_embd", 64))
    layers = int(getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "decoder_layers", None)
                 or getattr(cfg, "n_layer", 1))
    encoder_heads = int(getattr(cfg, "encoder_attention_heads", 0) or 0) if cfg.is_encoder_decoder else 0
    try:
        dtype_bytes = next(model.parameters()).element_size()
    except StopIteration:
        dtype_bytes = 4
    return Shape(layers=layers, heads=heads, kv_heads=int(getattr(cfg, "num_key_value_heads", None) or heads),
                 head_dim=int(getattr(cfg, "head_dim", None) or hidden // heads),
                 vocab=int(getattr(cfg, "vocab_size", 1)), dtype_bytes=dtype_bytes, encoder_heads=encoder_heads)


def _supports_cache(model) -> bool:
    return (not model.config.is_encoder_decoder and getattr(model, "_supports_cache_class", True)
            and getattr(model.config, "use_cache", True) is not False)


def _stop(event: threading.Event | None) -> bool:
    return (event is not None and event.is_set()) or budgets.expired()


def prefilled(model, input_ids: torch.Tensor, width: int = 1, event: threading.Event | None = None,
              chunk: int | None = None):
    """A key/value cache holding all but the last prompt token, repeated `width` times; None where
    there is nothing to gain (a prompt within one chunk, an encoder-decoder, a model without a
    cache). Raises PrefillStopped when `event`, the budget or the memory guard asks to stop."""
    n = input_ids.shape[1] - 1
    chunk = chunk or PREFILL_CHUNK
    if n <= chunk or input_ids.shape[0] != 1 or not _supports_cache(model):
        return None
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        for start in range(0, n, chunk):
            if _stop(event):
                raise PrefillStopped(f"read {start:,} of {n + 1:,} prompt tokens")
            end = min(n, start + chunk)
            model(input_ids=input_ids[:, start:end], past_key_values=cache, use_cache=True,
                  cache_position=torch.arange(start, end, device=input_ids.device))
            budgets.fair_threads()
    if width > 1:
        cache.batch_repeat_interleave(width)
    return cache
