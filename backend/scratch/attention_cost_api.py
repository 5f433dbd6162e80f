"""Chapter 11's cost of attention, by role: `/attention_cost` (time and memory of one attention layer
as the text grows, with the quadratic fitted) and `/sparse_attention` (sliding-window, block-sparse
and linear attention recomputed on the packaged model's own queries, keys and values, drawn beside
full attention, with their error per layer and head).

Both ask the hub inside a gpu_task, like the other tabs' entry points, and return plain data.
"""

from __future__ import annotations

import math

import torch

from backend import hub
from backend.engines.attention import extract
from backend.engines.attention import math as am
from backend.engines.scratch import sparse_attention as sa
from backend.runtime import budget
from backend.runtime.device import gpu_task
from backend.runtime.validation import as_int, check_text
from backend.scratch import attention_cost as cost

LIVE_MAX_TOKENS = 2048  # one request: 64 ... 2,048 (bench/attention_cost.py measures 4,096 too)
MIN_TOKENS = 64
SPARSE_MAX_TOKENS = 256
DEFAULT_TEXT = (
    "Scaling laws say that a language model's loss falls as a power law of its size, its data and its compute. "
    "Self-attention compares every token with every other one, so its cost grows with the square of the text's "
    "length: a text twice as long costs four times as much. Sparse attention keeps only some of the pairs, a "
    "window around each token, a few global tokens and some random blocks, as BigBird does; linear attention "
    "replaces the softmax by a product of feature maps, so the sum over the keys is computed once for all the "
    "queries. Each saves time and memory on long texts; each changes the numbers attention produces.")
VARIANTS = ("sliding window", "block-sparse", "linear")


def lengths_up_to(max_tokens: int) -> list[int]:
    """64, 128, ... up to max_tokens (powers of two)."""
    out, t = [], MIN_TOKENS
    while t <= max_tokens:
        out.append(t)
        t *= 2
    return out


def geometry(model) -> dict:
    cfg = model.config
    heads = int(cfg.num_attention_heads)
    head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // heads)
    return {"heads": heads, "head_dim": head_dim, "hidden": int(cfg.hidden_size), "layers": int(cfg.num_hidden_layers),
            "max_positions": int(getattr(cfg, "max_position_embeddings", 0) or 0)}


@gpu_task(duration=120)
def attention_cost(role="encoder", max_tokens=1024, window=64, repeats=3) -> dict:
    """`/attention_cost`: one attention layer of the role's model (its heads x head size) timed at
    64 ... max_tokens tokens, four ways; the quadratic fit of full attention's time."""
    role = extract.check_role(role)
    max_tokens = as_int("max_tokens", max_tokens, lo=256, hi=LIVE_MAX_TOKENS)
    window = as_int("window", window, lo=1, hi=512)
    repeats = as_int("repeats", repeats, lo=1, hi=5)
    lm = hub.load(role)
    g = geometry(lm.model)
    lengths = lengths_up_to(max_tokens)
    rows = cost.measure_lengths(lengths, g["heads"], g["head_dim"], window=window, causal=role == "decoder",
                                repeats=repeats, check=budget.check)
    fits = {}
    for method in cost.METHODS:
        mine = [r for r in rows if r["method"] == method]
        fits[method] = cost.fit_quadratic([r["tokens"] for r in mine], [r["seconds"] for r in mine])
    return {"role": role, "model": lm.describe(), "geometry": g, "lengths": lengths, "window": window,
            "repeats": repeats, "rows": rows, "fits": fits, "causal": role == "decoder",
            "slower_than_full": cost.slower_than_full(rows),
            "notes": ["time: the fastest of at least `repeats` calls (more for short ones) on one torch thread, float32, random q/k/v of the model's "
                      "heads x head size (one layer's attention core, without the q/k/v/output projections)",
                      "memory: peak resident memory above the start of the call (Linux VmHWM); other work in "
                      "this process at the same time can add to it",
                      "weights_mb: the size of the T x T weights of every head, which full attention holds"]}


def _head_tensors(lmath) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(H, T, d) queries (after rotary), keys and values each query head uses, float32."""
    q = lmath.q_rot if lmath.q_rot is not None else lmath.q
    return q[0].float(), lmath.k_rep[0].float(), lmath.v_rep[0].float()


def _masks(t: int, causal: bool, window: int, block: int, global_tokens: int, random_blocks: int, seed: int):
    return {"sliding window": sa.sliding_window_mask(t, window, causal),
            "block-sparse": sa.block_sparse_mask(t, block, global_tokens, random_blocks, seed, causal)}


def errors_for_layer(lmath, masks: dict, causal: bool) -> dict[str, list[float]]:
    """Per head, each variant's relative error against the layer's full attention output."""
    q, k, v = _head_tensors(lmath)
    full = lmath.output[0].float()
    out = {name: [] for name in VARIANTS}
    for h in range(q.size(0)):
        for name, mask in masks.items():
            approx, _ = sa.masked_attention(q[h], k[h], v[h], mask)
            out[name].append(round(sa.relative_error(approx, full[h]), 4))
        out["linear"].append(round(sa.relative_error(sa.linear_attention(q[h], k[h], v[h], causal), full[h]), 4))
    return out


def kept_weight(weights: torch.Tensor, mask: torch.Tensor) -> list[float]:
    """Per head, the share of full attention's weight that falls on the pairs a mask keeps (the mean
    over queries of each row's kept weight): what a sparse pattern can still see of the model's own."""
    return [round(float(x), 4) for x in (weights * mask.to(weights.dtype)).sum(-1).mean(-1).tolist()]


def _patterns(lmath, head: int, masks: dict, causal: bool) -> dict:
    q, k, _ = _head_tensors(lmath)
    full = lmath.weights[0, head].float()
    pats = {"full": full}
    for name, mask in masks.items():
        scaled = (q[head] @ k[head].T / math.sqrt(q.size(-1))).masked_fill(~mask, float("-inf"))
        pats[name] = torch.nan_to_num(torch.softmax(scaled, -1), nan=0.0)
    pats["linear"] = sa.linear_weights(q[head], k[head], causal)
    return {name: [[round(float(x), 4) for x in row] for row in m.tolist()] for name, m in pats.items()}


def _check_sparse_args(window, block, global_tokens, random_blocks, seed) -> tuple[int, ...]:
    return (as_int("window", window, lo=1, hi=256), as_int("block", block, lo=2, hi=128),
            as_int("global_tokens", global_tokens, lo=0, hi=32), as_int("random_blocks", random_blocks, lo=0, hi=8),
            as_int("seed", seed, lo=0, hi=2**31 - 1))


@gpu_task(duration=60)
def sparse_attention(text=DEFAULT_TEXT, role="encoder", layer=0, head=0, window=16, block=16, global_tokens=2,
                     random_blocks=1, seed=0) -> dict:
    """`/sparse_attention`: full, sliding-window, block-sparse and linear attention on the model's own
    q, k, v at every layer and head: the chosen head's four patterns, and each variant's relative
    error (||approx - full|| / ||full|| of the head's output) per layer and head."""
    role = extract.check_role(role)
    window, block, global_tokens, random_blocks, seed = _check_sparse_args(window, block, global_tokens,
                                                                            random_blocks, seed)
    text = check_text(text if text not in (None, "") else DEFAULT_TEXT, "attention", what="text")
    lm = hub.load(role)
    model = lm.model
    causal = am.is_causal(model)
    enc = extract.encode(lm.tokenizer, text, None, causal=causal, max_tokens=SPARSE_MAX_TOKENS)
    n_layers, n_heads = len(am.layers_of(model)), am.num_heads(model)
    layer, head = as_int("layer", layer, lo=0, hi=n_layers - 1), as_int("head", head, lo=0, hi=n_heads - 1)
    inputs = {k: v.to(next(model.parameters()).device) for k, v in enc.inputs.items()}
    _, hiddens = am.run_model(model, inputs)
    t = len(enc.token_ids)
    masks = _masks(t, causal, window, block, global_tokens, random_blocks, seed)
    errors, patterns, weight_kept = [], None, {name: [] for name in masks}
    for i, hidden in enumerate(hiddens):
        budget.check(f"compared {i} of {n_layers} layers")
        lmath = am.layer_math(model, i, hidden, inputs["attention_mask"])
        errors.append(errors_for_layer(lmath, masks, causal))
        for name, mask in masks.items():
            weight_kept[name].append(kept_weight(lmath.weights[0].float(), mask))
        if i == layer:
            patterns = _patterns(lmath, head, masks, causal)
    kept = {name: round(sum(sum(r) for r in weight_kept[name]) / (n_layers * n_heads), 4) for name in masks}
    full_pairs = sa.scored_pairs(sa.full_mask(t, causal))
    d = geometry(model)["head_dim"]
    cost_rows = [{"method": "full", "scores": full_pairs, "share": 1.0}] + [
        {"method": name, "scores": sa.scored_pairs(m), "share": round(sa.scored_pairs(m) / full_pairs, 4),
         "weight_kept": kept[name]} for name, m in masks.items()] + [
        {"method": "linear", "scores": 0, "share": 0.0, "state_numbers": d * d + d,
         "note": f"no scores: a {d} x {d} sum and a {d}-vector per head instead"}]
    return {"role": role, "model": lm.describe(), "tokens": enc.tokens, "num_tokens": t, "causal": causal,
            "layer": layer, "head": head, "num_layers": n_layers, "num_heads": n_heads,
            "settings": {"window": window, "block": block, "global_tokens": global_tokens,
                         "random_blocks": random_blocks, "seed": seed},
            "patterns": patterns, "cost": cost_rows, "weight_kept": weight_kept,
            "errors": {name: [row[name] for row in errors] for name in VARIANTS},
            "mean_error": {name: round(sum(sum(r[name]) for r in errors) / (n_layers * n_heads), 4)
                           for name in VARIANTS}}

