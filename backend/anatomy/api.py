"""Role-level entry point of the Anatomy tab and of `/anatomy`.

One call loads the role's model, recomputes it from scratch layer by layer, compares every
hidden state with the model's own, and returns plain data: per-layer differences, the code
of every step, the residual stream, one head's masked attention, the logit lens (decoder),
mean pooling vs the embedder (encoder) and the parameter budget.
"""

from __future__ import annotations

import inspect
import time

import numpy as np
import torch

from backend.runtime import budget, config
from backend.engines.embedding import vectors as embedding
from backend import hub
from backend.runtime import precision
from backend.runtime.device import gpu_task
from backend.anatomy import lens, ops, parameters, pooling, scratch, stream
from backend.engines.attention import encodings
from backend.engines.attention.extract import check_role, encode, readable_tokens
from backend.engines.attention.math import scaled_dot_product_attention
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int, check_text, opt_text

ROLES = ("encoder", "decoder")
MAX_TOKENS = 128  # every layer's T x D states and one head's T x T matrices in the JSON
TOLERANCE = scratch.TOLERANCE
DECIMALS = 4
FIRST_EXAMPLE = ("time flies like an arrow", "fruit flies")
HELPERS = {
    "bert": (ops.layer_norm, scaled_dot_product_attention),
    "llama": (ops.rms_norm, encodings.rotary_inv_freq, encodings.rotary_cos_sin, scaled_dot_product_attention),
    "gpt2": (ops.layer_norm, ops.conv1d, scaled_dot_product_attention),
}


def _say(progress, fraction: float, desc: str) -> None:
    if progress is not None:
        progress(fraction, desc)


def _rounded(t: torch.Tensor) -> list:
    return np.round(t.detach().float().cpu().numpy().astype(np.float64), DECIMALS).tolist()


def _check_length(n: int) -> None:
    if n > MAX_TOKENS:
        raise InputError(
            f"The text has {n} tokens; the Anatomy tab takes at most {MAX_TOKENS} "
            "(it keeps every layer's hidden states of every token). Shorten the text.")


def _encode(lm, text: str, text_b: str, causal: bool):
    if not text.strip():
        raise InputError("Enter a text to take apart, e.g. 'time flies like an arrow'.")
    enc = encode(lm.tokenizer, text, text_b or None, causal=causal, max_tokens=10**9)
    _check_length(len(enc.token_ids))
    return enc


def _pick(name: str, value, n: int, what: str) -> int:
    """A layer/head/token index in [0, n) (-1 counts from the end for tokens)."""
    i = as_int(name, value)
    if name == "token_index" and -n <= i < 0:
        i += n
    if not 0 <= i < n:
        raise InputError(f"{what} {i} does not exist here: choose 0 to {n - 1}.")
    return i


def code_of(family: str) -> list[dict]:
    """The source of every step the pass runs, in order (what the tab shows is what ran)."""
    fns = list(scratch.RECIPES[family].STEPS) + list(HELPERS[family])
    return [{"name": f.__name__, "doc": (inspect.getdoc(f) or "").split("\n")[0], "source": inspect.getsource(f)}
            for f in fns]


def attach_numbers(code: list[dict], diffs: list[float], stream_: dict, last_normed: bool) -> None:
    """Put next to each step the numbers it produced (what the tab prints under its source)."""
    fmt = lambda values: [float(f"{v:.3g}") for v in values]  # noqa: E731
    numbers = {
        "embeddings": {"max |ours - model's|": diffs[0]},
        "encoder_layer": {"max |ours - model's| per layer": fmt(diffs[1:])},
        "decoder_layer": {"max |ours - model's| per layer": fmt(diffs[1:])},
        "attention_sublayer": {"mean size of what attention added, per layer": fmt(stream_["attn_added_mean"])},
        "feed_forward_sublayer": {"mean size of what the MLP added, per layer": fmt(stream_["mlp_added_mean"])},
        "mlp_sublayer": {"mean size of what the MLP added, per layer": fmt(stream_["mlp_added_mean"])},
    }
    if last_normed:
        numbers["final_norm"] = {"max |ours - model's| of the last hidden state": diffs[-1]}
    for step in code:
        step["numbers"] = numbers.get(step["name"], {})


def _mask_view(trace, inputs: dict, tokens: list[str], row: int, head: int, layer: int, kind: str) -> dict:
    scores, mask, weights = trace.parts
    real = int(inputs["attention_mask"][row].sum())
    return {
        "kind": kind,
        "layer": layer,
        "head": head,
        "tokens": tokens,
        "attention_mask": inputs["attention_mask"][row].tolist(),
        "real_tokens": real,
        "scores": _rounded(scores[row, head]),
        "mask": mask[row, 0].int().tolist(),
        "weights": _rounded(weights[row, head]),
    }


def padding_view(model, tokenizer, text: str, text_b: str, layer: int, head: int) -> dict:
    """The encoder's padding mask: A and B as a batch of two, the shorter one padded (`model`: the float32 twin)."""
    enc = tokenizer([text, text_b], padding=True, return_tensors="pt")
    _check_length(enc["input_ids"].shape[1])
    inputs = dict(enc)
    trace = scratch.run(model, inputs, keep_layer=layer)
    diffs = scratch.layer_diffs(trace, scratch.reference(model, inputs), inputs["attention_mask"])
    lengths = inputs["attention_mask"].sum(1)
    row = int(lengths.argmin())
    tokens = readable_tokens(tokenizer, inputs["input_ids"][row].tolist())
    view = _mask_view(trace, inputs, tokens, row, head, layer, "padding")
    view["batch"] = [readable_tokens(tokenizer, ids.tolist()) for ids in inputs["input_ids"]]
    view["batch_attention_mask"] = inputs["attention_mask"].tolist()
    view["batch_max_abs_diff"] = max(diffs)
    return view


def embedder_check(text: str, progress=None) -> dict:
    """Mean pooling of our from-scratch last layer on the embedder's model = its embedding."""
    lm = hub.load("embedder", progress=progress)
    model = precision.float32_twin(lm.model)  # compared in float32 whatever the served dtype
    fam = scratch.family(model)
    inputs = dict(lm.tokenizer([text], return_tensors="pt", truncation=True, max_length=MAX_TOKENS))
    trace = scratch.run(model, inputs)
    ours = pooling.sentence_embedding(scratch.RECIPES[fam].final_norm(scratch.base_model(model), trace.hidden[-1]),
                                      inputs["attention_mask"])[0].cpu().numpy()
    theirs = embedding.embed_texts([text], model, lm.tokenizer)[0]
    diff = float(np.abs(ours - theirs).max())
    return {
        "checkpoint": lm.checkpoint,
        "dims": int(ours.shape[0]),
        "max_abs_diff": diff,
        "cosine": float(np.dot(ours, theirs)),
        "within_tolerance": diff < TOLERANCE,
        "head": np.round(ours[:8].astype(np.float64), DECIMALS).tolist(),
        "model": lm.describe(),
    }


def _compare(served, inputs: dict, layer: int, progress=None):
    """The from-scratch pass and the model's own forward, both on the float32 twin of `served`
    (itself on a float32 model): -> (twin, trace, reference, per-layer diffs, timing)."""
    model = precision.float32_twin(served)
    _say(progress, 0.2, "Recomputing every layer from the weights")
    start = time.perf_counter()
    trace = scratch.run(model, inputs, keep_layer=layer)
    scratch_s = time.perf_counter() - start
    _say(progress, 0.5, "Running the model once for comparison")
    start = time.perf_counter()
    ref = scratch.reference(model, inputs)
    forward_s = time.perf_counter() - start
    diffs = scratch.layer_diffs(trace, ref, inputs["attention_mask"])
    timing = {"from_scratch_s": round(scratch_s, 4), "model_forward_s": round(forward_s, 4)}
    return model, trace, ref, diffs, timing


def rounding_gap(served, inputs: dict, ref) -> dict | None:
    """For a model served below float32: how far its own forward (in its dtype) is from the float32
    reference `ref`, absolute and relative to the largest value, beside what its mantissa predicts.
    None for a float32 model (nothing is rounded)."""
    name = precision.dtype_name(served)
    if precision.is_float32(served):
        return None
    own = scratch.reference(served, inputs)
    mask = inputs["attention_mask"]
    gaps = [scratch.max_abs_diff(a, b, mask) for a, b in zip(own.hidden, ref.hidden)]
    scale = max(scratch.max_abs_diff(h, torch.zeros_like(h), mask) for h in ref.hidden)
    gap = max(gaps)
    relative = gap / scale if scale else 0.0
    return {"dtype": name, "mantissa_bits": precision.MANTISSA_BITS.get(name), "relative_step":
            precision.relative_rounding(name), "max_abs_diff": gap, "largest_value": scale,
            "relative_diff": relative, "per_layer": gaps,
            "note": precision.rounding_note(name, gap, scale)}


@gpu_task(duration=60)
def anatomy(text, text_b="", role="encoder", layer=0, head=0, token_index=-1, override=None, progress=None) -> dict:
    """`/anatomy`: the whole model recomputed from its weights, and everything the tab draws.

    Returns `layers` (max abs diff per hidden state: embeddings, then layer 1..L), `code`
    (each step's source), `stream` (residual stream for `token_index`), `masks` (one head's
    scores before the mask, the mask, the weights after, at `layer`), `lens` (decoder),
    `pooling` (encoder), `budget`, `timing` and `model` (lm.describe()).
    """
    # The page prints these differences to 3 digits: added in one order (one thread), the same example
    # gives the same digits whether or not another request runs beside it (budget.one_order_of_sums).
    with budget.one_order_of_sums():
        return _anatomy(text, text_b, role, layer, head, token_index, override, progress)


def _anatomy(text, text_b, role, layer, head, token_index, override, progress) -> dict:
    role = check_role(role)
    text = check_text(text, "text")
    text_b = check_text(text_b, "attention", what="second sentence (text_b)")
    for name, value in (("layer", layer), ("head", head), ("token_index", token_index)):
        as_int(name, value)  # the range depends on the model: _pick says what is valid
    override = opt_text("override", override, max_chars=config.MAX_OVERRIDE_CHARS)
    lm = hub.load(role, override, progress)
    fam = scratch.family(lm.model)
    causal = fam != "bert"
    enc = _encode(lm, text, text_b, causal)
    cfg = lm.model.config
    n_layers, n_heads = int(cfg.num_hidden_layers), int(cfg.num_attention_heads)
    layer = _pick("layer", layer, n_layers, "Layer")
    head = _pick("head", head, n_heads, "Head")
    token = _pick("token_index", token_index, len(enc.token_ids), "Token")
    inputs = enc.inputs
    model, trace, ref, diffs, timing = _compare(lm.model, inputs, layer, progress)
    result = {
        "family": fam,
        "role": lm.role,
        "tokens": enc.tokens,
        "num_tokens": len(enc.token_ids),
        "num_layers": n_layers,
        "num_heads": n_heads,
        "hidden_size": int(cfg.hidden_size),
        "layers": [{"layer": i, "name": "embeddings" if i == 0 else f"layer {i}", "max_abs_diff": d}
                   for i, d in enumerate(diffs)],
        "max_abs_diff": max(diffs),
        "tolerance": TOLERANCE,
        "within_tolerance": max(diffs) < TOLERANCE,
        "last_compared_after_final_norm": ref.last_is_normed,
        "model_dtype": precision.dtype_name(lm.model),
        "compared_in": "float32",
        "rounding": rounding_gap(lm.model, inputs, ref),
        "code": code_of(fam),
        "stream": stream.residual_stream(trace, inputs["attention_mask"], token),
        "lens": None,
        "pooling": None,
        "budget": parameters.parameter_budget(lm.model),
        "timing": timing,
    }
    result["stream"]["token"] = enc.tokens[token]
    attach_numbers(result["code"], diffs, result["stream"], ref.last_is_normed)
    _say(progress, 0.7, "Masks, logit lens, pooling")
    if causal or not text_b.strip():
        kind = "causal" if causal else "none (one sentence: add sentence B to see padding)"
        result["masks"] = _mask_view(trace, inputs, enc.tokens, 0, head, layer, kind)
    else:
        result["masks"] = padding_view(model, lm.tokenizer, text, text_b, layer, head)
    if ref.logits is not None and lens.lm_head(model) is not None:
        t = len(enc.token_ids)
        positions = list(range(max(0, t - lens.LENS_POSITIONS), t))
        result["lens"] = lens.logit_lens(model, lm.tokenizer, trace, ref.logits, positions,
                                         list(enc.token_ids))
        result["lens"]["tokens"] = [enc.tokens[p] for p in positions]
    if role == "encoder":
        result["pooling"] = embedder_check(text, progress)
    result["model"] = lm.describe()
    _say(progress, 1.0, "Done")
    return result
