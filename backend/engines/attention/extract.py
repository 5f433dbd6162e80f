"""Attention extraction for the Attention tab and the `/attention`, `/attention_math` APIs.

Functions take a model and its tokenizer (so unit tests pass tiny random models) and return
plain data: numpy arrays and JSON-able dicts. The from-scratch math lives in `math`,
positional encodings in `encodings`, the bertviz HTML in `views`; `api` serves them by role.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.engines.attention import math as am
from backend.runtime import precision
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int, check_text, kind

MAX_TOKENS = 256  # heatmaps, summary, math: beyond this the T x T matrices stop being readable
VIEW_MAX_TOKENS = 96  # bertviz head/model views
MAX_ARRAY_VALUES = 6 * 12 * 96 * 96  # all-layers array in /attention: MiniLM at 96 tokens (~4.5 MB JSON)
DECIMALS = 4  # attention values in the API
MATH_DECIMALS = 4
TOLERANCE = 1e-4  # ours vs the model's own attention weights, both in float32 (a bf16/fp16 model's float32 twin)

FIRST_EXAMPLE = ("time flies like an arrow", "fruit flies like a banana")
ROLES = ("encoder", "decoder")  # the models whose attention the app shows


def check_role(role) -> str:
    """'encoder' or 'decoder' (any case, spaces ignored), else a readable InputError."""
    if role is not None and not isinstance(role, str):
        raise InputError(f"Role must be 'encoder' or 'decoder', got {kind(role)}.")
    role = (role or "").strip().lower()
    if role not in ROLES:
        raise InputError(f"Role must be 'encoder' or 'decoder', got {role!r}.")
    return role


@dataclass
class Encoded:
    """A tokenised text (or pair), batch of one, ready for the model."""

    inputs: dict
    token_ids: list[int]
    tokens: list[str]  # readable strings, one per token (what the views show)
    special: list[bool]
    sentence_b_start: int | None


@dataclass
class AttentionResult:
    tokens: list[str]
    token_ids: list[int]
    special: list[bool]
    sentence_b_start: int | None
    attention: np.ndarray  # float32 (layers, heads, T, T), rows = queries, columns = keys
    causal: bool
    arch: str


def _clean(text: str | None, what: str) -> str:
    return check_text(text, "attention", what=what)


def readable_tokens(tokenizer, ids: list[int]) -> list[str]:
    """One display string per token: byte-level pieces ('Ġflies') become text (' flies');
    WordPiece pieces ('##ing') and special tokens stay as they are."""
    pieces = tokenizer.convert_ids_to_tokens(ids)
    special = set(tokenizer.all_special_ids)
    out = []
    for i, piece in zip(ids, pieces):
        if i in special or piece is None:
            out.append(piece if piece is not None else f"<{i}>")
            continue
        try:
            text = tokenizer.convert_tokens_to_string([piece])
        except Exception:  # a tokenizer without this method: show the raw piece
            text = piece
        if piece.startswith("##") and not text.startswith("##"):
            text = piece
        out.append(text if text != "" else piece)
    return out


def encode(tokenizer, text: str, text_b: str | None = None, *, causal: bool, max_tokens: int = MAX_TOKENS) -> Encoded:
    """Tokenise one text or a pair; refuse empty input and more than `max_tokens` tokens.

    Encoder pairs use the tokenizer's own pair format ([CLS] a [SEP] b [SEP]); a decoder has no
    pair format, so b follows a after a space and sentence B starts at its first token.
    """
    text = _clean(text, "text")
    text_b = _clean(text_b, "second sentence")
    if not text.strip():
        if text_b.strip():
            raise InputError("Enter the first sentence too (the second one is optional).")
        raise InputError("Enter a text to see its attention, e.g. 'time flies like an arrow'.")
    pair = bool(text_b.strip())
    if causal:
        ids = tokenizer(text, add_special_tokens=True)["input_ids"]
        b_start = None
        if pair:
            b_start = len(ids)
            ids = ids + tokenizer(" " + text_b.lstrip(), add_special_tokens=False)["input_ids"]
        type_ids = None
    else:
        enc = tokenizer(text, text_b if pair else None, add_special_tokens=True)
        ids = enc["input_ids"]
        type_ids = enc.get("token_type_ids")
        b_start = None
        if pair:
            if type_ids and 1 in type_ids:
                b_start = type_ids.index(1)
            else:  # tokenizers without segment ids: B starts after the first separator
                sep = tokenizer.sep_token_id
                b_start = ids.index(sep) + 1 if sep in ids else None
    if not ids:
        raise InputError("The text produced no tokens. Enter some words.")
    if len(ids) > max_tokens:
        raise InputError(
            f"The text has {len(ids)} tokens; attention is shown for at most {max_tokens} "
            f"(a {len(ids)} x {len(ids)} matrix per head stops being readable). Shorten the text."
        )
    inputs = {
        "input_ids": torch.tensor([ids]),
        "attention_mask": torch.ones(1, len(ids), dtype=torch.long),
    }
    if type_ids is not None:
        inputs["token_type_ids"] = torch.tensor([type_ids])
    special_ids = set(tokenizer.all_special_ids)
    return Encoded(
        inputs=inputs,
        token_ids=list(ids),
        tokens=readable_tokens(tokenizer, ids),
        special=[i in special_ids for i in ids],
        sentence_b_start=b_start,
    )


def _to_device(inputs: dict, model) -> dict:
    device = next(model.parameters()).device
    return {k: v.to(device) for k, v in inputs.items()}


def compute_attention(model, tokenizer, text: str, text_b: str | None = None) -> AttentionResult:
    """Run the model once and return every layer's and head's attention weights (float32)."""
    causal = am.is_causal(model)
    enc = encode(tokenizer, text, text_b, causal=causal)
    attentions, _ = am.run_model(model, _to_device(enc.inputs, model))
    att = torch.stack([a[0] for a in attentions]).float().cpu().numpy()
    return AttentionResult(
        tokens=enc.tokens,
        token_ids=enc.token_ids,
        special=enc.special,
        sentence_b_start=enc.sentence_b_start,
        attention=att,
        causal=causal,
        arch=am.architecture(model),
    )


def rounded(array: np.ndarray, decimals: int = DECIMALS) -> list:
    """Nested lists of floats rounded in float64 (so JSON shows 0.1234, not 0.12339999)."""
    return np.round(np.asarray(array, dtype=np.float64), decimals).tolist()


# ---------------------------------------------------------------------------- head summary

SUMMARY_METRICS = {
    "entropy": "entropy (bits): low = focused, high = spread out",
    "special": "attention to special tokens ([CLS], [SEP], <|im_start|>...)",
    "first": "attention to the first token (an 'attention sink' in decoders)",
    "previous": "attention to the previous token",
    "self": "attention to the token itself",
}


def head_summary(attention: np.ndarray, special: list[bool]) -> dict[str, np.ndarray]:
    """Per layer and head (L, H) averages over query tokens, to find interesting heads.

    entropy: mean over queries of -sum p log2 p. special/first/previous/self: mean share of a
    query's attention that goes to special tokens / position 0 / position i-1 / position i.
    """
    a = np.asarray(attention, dtype=np.float64)
    _, _, t, _ = a.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(a > 0, a * np.log2(a), 0.0).sum(-1)
    out = {"entropy": ent.mean(-1)}
    spec = np.asarray(special, dtype=bool)
    out["special"] = a[..., spec].sum(-1).mean(-1) if spec.any() else np.zeros(a.shape[:2])
    out["first"] = a[..., :, 0].mean(-1)
    if t > 1:
        idx = np.arange(1, t)
        out["previous"] = a[..., idx, idx - 1].mean(-1)
    else:
        out["previous"] = np.zeros(a.shape[:2])
    diag = np.arange(t)
    out["self"] = a[..., diag, diag].mean(-1)
    return {k: v.astype(np.float32) for k, v in out.items()}


def top_heads(summary: dict[str, np.ndarray], n: int = 3) -> dict[str, list[dict]]:
    """The n most extreme heads per metric (lowest entropy, highest of the others)."""
    out = {}
    for name, grid in summary.items():
        flat = grid.ravel()
        order = np.argsort(flat) if name == "entropy" else np.argsort(-flat)
        out[name] = [
            {"layer": int(i // grid.shape[1]), "head": int(i % grid.shape[1]), "value": round(float(flat[i]), 4)}
            for i in order[:n]
        ]
    return out


# ---------------------------------------------------------------------------- API payloads

def check_layer_head(result_or_shape, layer: int | None, head: int | None) -> tuple[int | None, int | None]:
    shape = result_or_shape.attention.shape if hasattr(result_or_shape, "attention") else result_or_shape
    n_layers, n_heads = shape[0], shape[1]
    if layer is not None:
        layer = as_int("layer", layer)
        if not 0 <= layer < n_layers:
            raise InputError(f"Layer {layer} does not exist: this model has layers 0 to {n_layers - 1}.")
    if head is not None:
        head = as_int("head", head)
        if not 0 <= head < n_heads:
            raise InputError(f"Head {head} does not exist: this model has heads 0 to {n_heads - 1}.")
    return layer, head


def attention_payload(result: AttentionResult, layer: int | None = None) -> dict:
    """What `/attention` returns (JSON-able).

    `attention` is layers x heads x T x T rounded to 4 decimals; with `layer` given, only that
    layer ([1 x heads x T x T], `layers` says which). All layers are sent while
    layers x heads x T^2 <= MAX_ARRAY_VALUES (MiniLM: 96 tokens; SmolLM2's 30 x 9: 49 tokens);
    beyond that `attention` is None and `note` says to pick a layer.
    """
    n_layers, n_heads, t, _ = result.attention.shape
    layer, _ = check_layer_head(result, layer, None)
    note = ""
    if layer is not None:
        layers = [layer]
        data = rounded(result.attention[layer : layer + 1])
    elif n_layers * n_heads * t * t <= MAX_ARRAY_VALUES:
        layers = list(range(n_layers))
        data = rounded(result.attention)
    else:
        layers, data = [], None
        max_t = int((MAX_ARRAY_VALUES / (n_layers * n_heads)) ** 0.5)
        note = (
            f"The text has {t} tokens: all {n_layers} layers x {n_heads} heads are returned for up to "
            f"{max_t} tokens with this model. Pass a layer (0-{n_layers - 1}) to get that layer's attention."
        )
    summary = head_summary(result.attention, result.special)
    return {
        "tokens": result.tokens,
        "token_ids": result.token_ids,
        "special_tokens": result.special,
        "sentence_b_start": result.sentence_b_start,
        "num_layers": n_layers,
        "num_heads": n_heads,
        "num_tokens": t,
        "causal": result.causal,
        "layers": layers,
        "shape": [len(layers), n_heads, t, t] if data is not None else None,
        "attention": data,
        "decimals": DECIMALS,
        "head_summary": {k: rounded(v) for k, v in summary.items()},
        "top_heads": top_heads(summary),
        "note": note,
    }


# ---------------------------------------------------------------------------- attention math

def _query_index(query_index, t: int) -> int:
    """The query token: a position 0..t-1, or Python-style from the end (-1 the last); empty: the last."""
    if query_index is None or query_index == "":
        query_index = t - 1
    query_index = as_int("query token index", query_index)
    if -t <= query_index < 0:
        query_index += t
    if not 0 <= query_index < t:
        raise InputError(f"Query token {query_index} does not exist: choose 0 to {t - 1} (or -1 for the last).")
    return query_index


def _mat(x: torch.Tensor, name: str, what: str) -> dict:
    arr = x.detach().float().cpu().numpy()
    arr = np.where(np.isneginf(arr), np.nan, arr)  # JSON has no -inf: masked entries are null
    data = np.round(arr.astype(np.float64), MATH_DECIMALS)
    return {
        "name": name,
        "what": what,
        "shape": list(arr.shape),
        "data": [[None if np.isnan(v) else v for v in row] for row in data.tolist()],
    }


def _matrices(lm, head: int, kv_head: int, theirs: torch.Tensor, causal: bool) -> list[dict]:
    """Every step of one head, in the order the computation takes them."""
    d = lm.q.shape[-1]
    matrices = [
        _mat(lm.q[0, head], "Q", f"queries: input x W_q (head {head})"),
        _mat(lm.k[0, kv_head], "K", f"keys: input x W_k (key/value head {kv_head})"),
        _mat(lm.v[0, kv_head], "V", f"values: input x W_v (key/value head {kv_head})"),
    ]
    if lm.q_rot is not None:
        matrices += [
            _mat(lm.q_rot[0, head], "Q_rot", "queries after the rotary position rotation"),
            _mat(lm.k_rot[0, kv_head], "K_rot", "keys after the rotary position rotation"),
        ]
    return matrices + [
        _mat(lm.scores[0, head], "scores", "Q K^T: every query's dot product with every key"),
        _mat(lm.scaled[0, head], "scaled", f"scores / sqrt(d_k) = scores / {d ** 0.5:.3f}, masked entries null (-inf)"),
        _mat(lm.mask[0, 0].float(), "mask", "1 where the query may attend to the key" + (" (causal)" if causal else "")),
        _mat(lm.weights[0, head], "weights", "softmax over each row: the attention weights"),
        _mat(theirs[0, head], "model_weights", "the model's own attention output, for comparison"),
        _mat(lm.output[0, head], "output", "weights x V: the head's output per token"),
    ]


def _layer_in_float32(model, enc, layer: int):
    """One layer's attention by hand and the model's own, both in float32: on the model itself when it
    is float32, else on its float32 twin (same weights). A bf16/fp16 model's own weights differ from
    those by rounding: measured too (`rounding`, None for float32), never counted as a mismatch.
    -> (LayerMath, the model's weights for the layer, inputs, rounding)."""
    twin = precision.float32_twin(model)
    inputs = _to_device(enc.inputs, twin)
    attentions, hiddens = am.run_model(twin, inputs)
    lm = am.layer_math(twin, layer, hiddens[layer], inputs["attention_mask"])
    theirs = attentions[layer].to(lm.weights.device)
    rounding = None
    if twin is not model:
        served = am.run_model(model, inputs)[0][layer]
        gap = am.max_abs_diff(served, theirs, inputs["attention_mask"])
        name = precision.dtype_name(model)
        rounding = {"dtype": name, "mantissa_bits": precision.MANTISSA_BITS.get(name),
                    "relative_step": precision.relative_rounding(name), "max_abs_diff_layer": gap,
                    "note": precision.rounding_note(name, gap)}
    return lm, theirs, inputs, rounding


def attention_math(
    model,
    tokenizer,
    text: str,
    layer: int,
    head: int,
    query_index: int | None = None,
    text_b: str | None = None,
) -> dict:
    """One layer/head computed step by step from the real weights, as JSON-able data.

    Every matrix is given with its shape; `max_abs_diff` compares our softmax weights with the
    model's own `attentions` for this head, `max_abs_diff_layer` for all heads of the layer.
    """
    causal = am.is_causal(model)
    enc = encode(tokenizer, text, text_b, causal=causal)
    n_layers = len(am.layers_of(model))
    n_heads = am.num_heads(model)
    layer, head = check_layer_head((n_layers, n_heads), layer, head)
    if layer is None or head is None:
        raise InputError("Choose a layer and a head.")
    query_index = _query_index(query_index, len(enc.token_ids))
    lm, theirs, inputs, rounding = _layer_in_float32(model, enc, layer)
    diff_layer = am.max_abs_diff(lm.weights, theirs, inputs["attention_mask"])
    diff_head = am.max_abs_diff(lm.weights[:, head : head + 1], theirs[:, head : head + 1], inputs["attention_mask"])
    tolerance = TOLERANCE
    n_kv = am.num_kv_heads(model)
    kv_head = head // (n_heads // n_kv)

    d = lm.q.shape[-1]
    matrices = _matrices(lm, head, kv_head, theirs, causal)
    q_row = lm.q_rot if lm.q_rot is not None else lm.q
    qk = lm.scores[0, head, query_index]
    return {
        "tokens": enc.tokens,
        "token_ids": enc.token_ids,
        "layer": layer,
        "head": head,
        "kv_head": kv_head,
        "num_layers": n_layers,
        "num_heads": n_heads,
        "num_kv_heads": n_kv,
        "head_dim": d,
        "causal": causal,
        "rotary": lm.q_rot is not None,
        "architecture": lm.arch,
        "input_shape": list(lm.x.shape[1:]),
        "input_note": (
            "the layer's input hidden states after input_layernorm (pre-norm, inside the layer)"
            if lm.arch in ("llama", "gpt2")
            else "the layer's input hidden states (BERT normalises after attention, so no norm here)"
        ),
        "matrices": matrices,
        "query_index": query_index,
        "query_token": enc.tokens[query_index],
        "query_key_dot_products": [round(float(v), MATH_DECIMALS) for v in qk.tolist()],
        "query_weights": [round(float(v), MATH_DECIMALS) for v in lm.weights[0, head, query_index].tolist()],
        "query_vector_norm": round(float(q_row[0, head, query_index].norm()), MATH_DECIMALS),
        "max_abs_diff": diff_head,
        "max_abs_diff_layer": diff_layer,
        "model_dtype": precision.dtype_name(model),
        "compared_in": "float32",
        "rounding": rounding,
        "tolerance": tolerance,
        "within_tolerance": bool(diff_layer < tolerance),
    }
