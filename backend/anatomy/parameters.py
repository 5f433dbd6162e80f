"""Where the parameters are: embeddings, attention (q/k/v/o), MLP, norms, head.

The book remarks that the feed-forward layers hold most of a transformer's weights; this
counts them from the model's own parameter names, so the learner can check. Tied weights
(an LM head sharing the embedding matrix) are counted once, as `model.num_parameters()` does.
"""

from __future__ import annotations

COMPONENTS = ("embeddings", "attention", "mlp", "norms", "head", "other")
NORM_PARTS = ("layernorm", "ln_1", "ln_2", "ln_f", "norm", "input_layernorm", "post_attention_layernorm")
ATTENTION_PARTS = {"query": "q", "q_proj": "q", "key": "k", "k_proj": "k", "value": "v", "v_proj": "v",
                   "o_proj": "o", "c_attn": "qkv (fused)"}


def component(name: str) -> tuple[str, str | None]:
    """(component, attention part or None) of one parameter name, e.g. 'encoder.layer.0.attention.self.query.weight'."""
    parts = name.lower().split(".")
    if any(p in NORM_PARTS or p.endswith("layernorm") or p.endswith("_norm") for p in parts):
        return "norms", None
    if any(p in ("embeddings", "wte", "wpe", "embed_tokens") for p in parts):
        return "embeddings", None
    if any(p in ("attention", "self_attn", "attn") for p in parts):
        for p in parts:
            if p in ATTENTION_PARTS:
                return "attention", ATTENTION_PARTS[p]
        return "attention", "o"  # BERT's attention.output.dense, GPT-2's attn.c_proj
    if any(p in ("intermediate", "mlp", "output", "feed_forward", "ffn") for p in parts):
        return "mlp", None
    if any(p in ("lm_head", "pooler", "classifier", "score", "qa_outputs", "cls") for p in parts):
        return "head", None
    return "other", None


def parameter_budget(model) -> dict:
    """Counts per component and per attention projection, percentages, and the check against num_parameters()."""
    counts = dict.fromkeys(COMPONENTS, 0)
    attention: dict[str, int] = {}
    for name, p in model.named_parameters():  # shared (tied) tensors appear once
        comp, part = component(name)
        counts[comp] += p.numel()
        if part:
            attention[part] = attention.get(part, 0) + p.numel()
    total = sum(counts.values())
    expected = int(model.num_parameters())
    head = getattr(model, "get_output_embeddings", lambda: None)()
    inputs = getattr(model, "get_input_embeddings", lambda: None)()
    tied = head is not None and inputs is not None and head.weight is inputs.weight
    rows = [{"component": c, "parameters": n, "percent": round(100.0 * n / total, 2) if total else 0.0}
            for c, n in counts.items() if n or c != "other"]
    return {
        "rows": rows,
        "attention_parts": attention,
        "total": total,
        "num_parameters": expected,
        "matches": total == expected,
        "tied_lm_head": tied,
        "note": "The LM head shares the embedding matrix (tied): counted once, under embeddings." if tied else "",
    }
