"""Role-level entry points of the Attention tab (and of `/attention`, `/attention_math`).

Each takes plain values and a role ("encoder" or "decoder"), asks the hub for the model
inside the ZeroGPU-wrapped call, and returns plain data for the tab to format. The last few
attention computations are kept, so moving the heatmap sliders does not rerun the model.
"""

from __future__ import annotations

import threading

from cachetools import LRUCache

from backend import hub
from backend.runtime.device import gpu_task
from backend.engines.attention import extract
from backend.engines.attention import encodings
from backend.attention import views
from backend.runtime.validation import as_int, check_text
from backend.engines.attention.extract import check_role

_CACHE_SIZE = 3
_CACHE: LRUCache = LRUCache(_CACHE_SIZE)  # (role, checkpoint, text, text_b) -> AttentionResult
_CACHE_LOCK = threading.Lock()


def _say(progress, fraction: float, desc: str) -> None:
    if progress is not None:
        progress(fraction, desc)


def _layer_arg(layer) -> int | None:
    """None, '' or -1 mean all layers; anything else is checked later (clear message if bad)."""
    if layer is None or layer == "" or str(layer).strip() in ("-1", "-1.0"):
        return None
    return layer


def cached_attention(lm, text, text_b) -> extract.AttentionResult:
    """The attention for (model, text, pair), computed once and kept for the heatmap sliders."""
    text = check_text(text, "attention", what="text")
    text_b = check_text(text_b, "attention", what="second sentence")
    key = (lm.role, lm.checkpoint, text, text_b)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]  # marks it used
    result = extract.compute_attention(lm.model, lm.tokenizer, text, text_b or None)
    with _CACHE_LOCK:
        _CACHE[key] = result  # the least recently used goes beyond _CACHE_SIZE
    return result


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


@gpu_task(duration=60)
def attention(text, text_b=None, role="encoder", layer=None, progress=None) -> dict:
    """`/attention`: every layer's and head's weights (or one layer's), the bertviz views, the summary.

    Returns `payload` (the JSON contract), `head_view` / `model_view` (iframe HTML, or a notice
    over VIEW_MAX_TOKENS), `summary` (metric -> layers x heads float32 arrays), `top_heads`,
    `num_tokens`, `num_layers`, `num_heads`, `causal`, `note` and `model` (lm.describe()).
    """
    role = check_role(role)
    lm = hub.load(role, progress=progress)
    _say(progress, 0.5, "Running the model")
    result = cached_attention(lm, text, text_b)
    payload = extract.attention_payload(result, _layer_arg(layer))
    payload["role"] = lm.role
    payload["model"] = lm.describe()
    _say(progress, 0.8, "Drawing the views")
    head_html, model_html = views.tab_views(result.attention, result.tokens, result.sentence_b_start,
                                        lm.checkpoint, extract.VIEW_MAX_TOKENS)
    n_layers, n_heads, t, _ = result.attention.shape
    return {
        "payload": payload,
        "head_view": head_html,
        "model_view": model_html,
        "summary": extract.head_summary(result.attention, result.special),
        "top_heads": payload["top_heads"],
        "num_tokens": t,
        "num_layers": n_layers,
        "num_heads": n_heads,
        "causal": result.causal,
        "note": payload["note"],
        "model": lm.describe(),
    }


@gpu_task(duration=60)
def heatmap(text, text_b, role, layer, head) -> dict:
    """One head's T x T weights, from the cached computation when the text has not changed.

    A layer or head past this model's last one is clamped to it (the sliders may still carry
    the previous model's range).
    """
    role = check_role(role)
    lm = hub.load(role)
    result = cached_attention(lm, text, text_b)
    n_layers, n_heads = result.attention.shape[:2]
    layer, head = extract.check_layer_head(result, min(as_int("layer", layer), n_layers - 1),
                                     min(as_int("head", head), n_heads - 1))
    return {
        "matrix": result.attention[layer, head],
        "tokens": result.tokens,
        "layer": layer,
        "head": head,
        "causal": result.causal,
        "checkpoint": lm.checkpoint,
        "model": lm.describe(),
    }


@gpu_task(duration=60)
def attention_math(text, text_b, role, layer, head, query_index=None, progress=None) -> dict:
    """`/attention_math`: one layer/head recomputed step by step, and its distance from the model's own."""
    role = check_role(role)
    lm = hub.load(role, progress=progress)
    _say(progress, 0.5, "Running the model")
    q = None if query_index is None or query_index == "" else query_index
    payload = extract.attention_math(lm.model, lm.tokenizer, text, layer, head, q, text_b or None)
    payload["role"] = lm.role
    payload["model"] = lm.describe()
    return payload


@gpu_task(duration=30)
def positions(role, progress=None) -> dict:
    """The Positions panel: sinusoids, the learned position table's similarity, rotary frequencies.

    `sinusoidal` and `learned_similarity` are numpy arrays (None when the model has no table),
    `rotary` a dict or None; plus `checkpoint` and `model`.
    """
    role = check_role(role)
    lm = hub.load(role, progress=progress)
    report = encodings.position_report(lm.model)
    report["checkpoint"] = lm.checkpoint
    report["model"] = lm.describe()
    return report
