"""Run a whole model from scratch, layer by layer, and compare with its own hidden states.

`run` feeds the tokens through a family's recipe (bert.py, llama.py, gpt2.py) in float32;
`compare` runs the model once with `output_hidden_states=True` and measures, per layer, the
largest |ours - model's| over real (non-padding) tokens. Recipe steps are looked up by name at
call time, so a test can swap one for a broken variant and watch the comparison fail.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import torch

from backend.anatomy import bert, gpt2, llama
from backend.anatomy.ops import Context, UnsupportedModel
from backend.engines.attention import families
from backend.engines.attention import encodings
from backend.engines.attention.math import build_mask

RECIPES = {"bert": bert, "llama": llama, "gpt2": gpt2}  # by family name (backend.engines.attention.families)
BLOCK = {"bert": "encoder_layer", "llama": "decoder_layer", "gpt2": "decoder_layer"}
TOLERANCE = 1e-4


def family(model) -> str:
    """Which recipe applies to `model` (its family's name), or a readable refusal naming the ones that exist."""
    fam = families.family_of(model)
    if fam is None or fam.name not in RECIPES:
        raise UnsupportedModel(
            f"The Anatomy tab has no from-scratch recipe for {getattr(model.config, 'model_type', '') or 'this'!s} "
            f"models; it covers {families.KNOWN}. Choose the default encoder or decoder, or a model of one of "
            "these kinds.")
    RECIPES[fam.name].check(base_model(model))
    return fam.name


def base_model(model):
    """The bare transformer inside a task model (BertModel inside BertForSequenceClassification...)."""
    return families.base_model(model)


def context(model, inputs: dict) -> Context:
    """The mask (padding, plus causal for a decoder) and, for llama, the rotary tables."""
    fam = family(model)
    mask = build_mask(inputs["attention_mask"], causal=fam != "bert")
    cos = sin = None
    if fam == "llama":
        cos, sin = encodings.rotary_cos_sin_for(model, inputs["input_ids"].shape[1], device=mask.device)
    return Context(config=model.config, mask=mask, cos=cos, sin=sin)


@dataclass
class Trace:
    """Everything the from-scratch pass saw, float32.

    hidden[0] is the embeddings' output, hidden[i] the output of layer i (before any final
    norm); attn_added[i] / mlp_added[i] what layer i+1's sub-layers added; parts the kept
    layer's (scores before the mask, mask, weights after); final = final_norm(hidden[-1]).
    """

    family: str
    hidden: list = field(default_factory=list)
    attn_added: list = field(default_factory=list)
    mlp_added: list = field(default_factory=list)
    parts: tuple | None = None
    final: torch.Tensor | None = None


def run(model, inputs: dict, keep_layer: int | None = None, progress=None) -> Trace:
    """The full from-scratch pass: embeddings, every layer, the final norm."""
    fam = family(model)
    recipe, base = RECIPES[fam], base_model(model)
    device = next(model.parameters()).device
    inputs = {k: v.to(device) for k, v in inputs.items()}
    ctx = context(model, inputs)
    token_types = inputs.get("token_type_ids")
    if token_types is None:
        token_types = torch.zeros_like(inputs["input_ids"])
    trace = Trace(fam)
    block = getattr(recipe, BLOCK[fam])
    all_layers = recipe.layers(base)
    with torch.inference_mode():
        x = recipe.embeddings(base, inputs["input_ids"], token_types)
        trace.hidden.append(x)
        for i, layer in enumerate(all_layers):
            ctx.layer_index = i
            x, attn_added, mlp_added, parts = block(layer, x, ctx)
            trace.hidden.append(x)
            trace.attn_added.append(attn_added)
            trace.mlp_added.append(mlp_added)
            if i == keep_layer:
                trace.parts = parts
            if progress is not None:
                progress((i + 1) / len(all_layers))
        trace.final = recipe.final_norm(base, x)
    return trace


def final_norm_module(model):
    """The module whose output the model reports as its last hidden state, if it has one."""
    base = base_model(model)
    return getattr(base, "norm", None) or getattr(base, "ln_f", None)


@dataclass
class Reference:
    """The model's own forward: hidden states, logits (LM only), and whether the last hidden state is normed."""

    hidden: tuple
    logits: torch.Tensor | None
    last_is_normed: bool


def reference(model, inputs: dict) -> Reference:
    """One plain forward with `output_hidden_states=True`.

    transformers reports the *normalised* last hidden state for pre-norm decoders (it ties
    the last entry to `last_hidden_state`); a hook on the final norm tells us which it is.
    """
    device = next(model.parameters()).device
    inputs = {k: v.to(device) for k, v in inputs.items()}
    norm = final_norm_module(model)
    seen: dict = {}
    owner = threading.get_ident()  # another request may run the same model meanwhile
    hook = None
    if norm is not None:
        hook = norm.register_forward_hook(
            lambda _m, _a, out: seen.__setitem__("out", out) if threading.get_ident() == owner else None)
    try:
        with torch.inference_mode():
            out = model(**inputs, output_hidden_states=True)
    finally:
        if hook is not None:
            hook.remove()
    hidden = tuple(h.float() for h in out.hidden_states)
    normed = "out" in seen and torch.equal(seen["out"].float(), hidden[-1])
    logits = getattr(out, "logits", None)
    return Reference(hidden, logits.float() if logits is not None else None, normed)


def max_abs_diff(ours: torch.Tensor, theirs: torch.Tensor, attention_mask: torch.Tensor) -> float:
    """Largest |ours - theirs| over real tokens (padding positions carry no meaning)."""
    keep = attention_mask.to(ours.device).bool()[..., None]
    diff = (ours.float() - theirs.float().to(ours.device)).abs().masked_fill(~keep, 0.0)
    return float(diff.max()) if diff.numel() else 0.0


def layer_diffs(trace: Trace, ref: Reference, attention_mask: torch.Tensor) -> list[float]:
    """Per hidden state (embeddings, layer 1..L): max abs diff from the model's own."""
    if len(ref.hidden) != len(trace.hidden):
        raise UnsupportedModel(
            f"The model reported {len(ref.hidden)} hidden states for {len(trace.hidden) - 1} layers; "
            "the comparison expects one per layer plus the embeddings.")
    ours = list(trace.hidden)
    if ref.last_is_normed:
        ours[-1] = trace.final
    return [max_abs_diff(a, b, attention_mask) for a, b in zip(ours, ref.hidden)]


def compare(model, inputs: dict) -> list[float]:
    """From scratch vs the model, per layer: what the tests and the tab's table use."""
    return layer_diffs(run(model, inputs), reference(model, inputs), inputs["attention_mask"])
