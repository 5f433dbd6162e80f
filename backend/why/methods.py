"""The attribution methods, from Captum, on a `Target`; attention rollout written out as a recipe.

Each method returns one score per scored token (`Target.positions`), signed: positive means the
token raises the explained quantity.

- gradient x input: Captum's LayerGradientXActivation on the token-embedding table, summed
  over the embedding's dimensions;
- integrated gradients: Captum's LayerIntegratedGradients on the same table, from a baseline
  input whose scored tokens are [PAD] (special tokens kept), with its completeness delta;
- occlusion: Captum's FeatureAblation with one feature per token, where ablating a feature
  removes that token from the sequence: score = f(text) - f(text without the token) (for a
  decoder, the prompt's cached keys and values before the removed token are reused:
  `Target.prefix_score`);
- attention rollout (Abnar & Zuidema 2020) and the raw last-layer attention: not gradients of
  the output, so not explanations of it; shown to be compared with the ones that are.
"""

from __future__ import annotations

import threading

import numpy as np
import torch

from backend.why.targets import Target, backbone, embedding_layer

GRADIENT_METHODS = ("gradient_x_input", "integrated_gradients")
METHODS = ("gradient_x_input", "integrated_gradients", "occlusion", "attention_rollout", "last_layer_attention")
DEFAULT_STEPS = 32
IG_BATCH = 8
_ATTENTION_LOCK = threading.Lock()


def _forward(target: Target):
    def forward(ids, mask, focus, *extra):  # Captum passes the extras in `_args`' order (sorted names)
        return target.score(ids, mask, focus, *extra)

    return forward


def _args(target: Target) -> tuple:
    _, mask, foc, ext = target.full_inputs()
    return (mask, foc, *[ext[k] for k in sorted(ext)])


def _per_token(attr: torch.Tensor, target: Target) -> np.ndarray:
    per = attr.detach().float().sum(-1)[0].cpu().numpy()
    return per[target.positions].astype(np.float64)


def gradient_x_input(target: Target) -> np.ndarray:
    from captum.attr import LayerGradientXActivation

    ids = target.full_inputs()[0]
    method = LayerGradientXActivation(_forward(target), embedding_layer(target.model))
    with torch.enable_grad():
        attr = method.attribute(ids, additional_forward_args=_args(target))
    return _per_token(attr, target)


def integrated_gradients(target: Target, n_steps: int = DEFAULT_STEPS, batch: int = IG_BATCH,
                         f_input: float | None = None) -> tuple[np.ndarray, dict]:
    """(scores, completeness): the scores sum, over all tokens, to about f(input) - f(baseline).
    `f_input`: f(input) when the caller has it (one forward fewer)."""
    from captum.attr import LayerIntegratedGradients

    ids = target.full_inputs()[0]
    method = LayerIntegratedGradients(_forward(target), embedding_layer(target.model))
    with torch.enable_grad():
        attr, delta = method.attribute(ids, baselines=target.baseline_ids(), additional_forward_args=_args(target),
                                       n_steps=n_steps, internal_batch_size=batch, return_convergence_delta=True)
    total = float(attr.detach().float().sum())
    f_in = target.value() if f_input is None else float(f_input)
    f_base = target.baseline_value()
    diff = f_in - f_base
    gap = abs(total - diff)
    return _per_token(attr, target), {
        "sum_of_attributions": total, "f_input": f_in, "f_baseline": f_base, "difference": diff,
        "gap": gap, "relative_gap": gap / abs(diff) if abs(diff) > 1e-12 else None,
        "captum_delta": float(delta.detach().float().abs().sum()), "steps": n_steps,
        "internal_batch_size": batch}


def occlusion(target: Target) -> np.ndarray:
    """f(text) - f(text without token i), for each scored token (Captum FeatureAblation)."""
    from captum.attr import FeatureAblation

    n = len(target.positions)
    method = FeatureAblation(target.keep_rows_forward())
    keep = torch.ones((1, n), dtype=torch.float64)
    # all n removals in one call: `scores_without` batches them itself (a decoder's by shared prefix)
    attr = method.attribute(keep, baselines=0.0, feature_mask=torch.arange(n).unsqueeze(0),
                            perturbations_per_eval=max(n, 1))
    return attr[0].detach().cpu().numpy().astype(np.float64)


# ----------------------------------------------------------------------------- attention

def attentions(target: Target) -> list[np.ndarray]:
    """Per layer, the (query, key) attention averaged over heads, for the whole input."""
    model = target.model
    inner = backbone(model)
    ids, mask, foc, ext = target.full_inputs()
    got: list = []

    def grab(_module, _inputs, output):
        att = getattr(output, "attentions", None)
        if att:
            got.append(att)

    with _ATTENTION_LOCK:
        was_impl = inner.config._attn_implementation
        was_flag = getattr(inner.config, "output_attentions", False)
        hook = inner.register_forward_hook(grab)
        try:
            if was_impl != "eager":
                inner.set_attn_implementation("eager")  # SDPA returns no attention weights
            inner.config.output_attentions = True
            with torch.no_grad():
                target.score(ids, mask, foc, *[ext[k] for k in sorted(ext)])
        finally:
            hook.remove()
            inner.config.output_attentions = was_flag
            if was_impl != "eager":
                inner.set_attn_implementation(was_impl)
    if not got:
        raise ValueError(f"{type(inner).__name__} returned no attention weights")
    return [a[0].float().mean(0).cpu().numpy().astype(np.float64) for a in got[-1]]


def rollout_matrix(layers: list[np.ndarray]) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020), the recipe in four lines:

    each layer's head-averaged attention A gets the residual connection added, A' = (A + I) / 2,
    its rows renormalised to sum to 1, and the layers are multiplied from the first upward:
    R = A'_L ... A'_2 A'_1. Row q of R is how much of position q's final state "flows" from each
    input token if information only moved along attention weights.
    """
    n = layers[0].shape[-1]
    rolled = np.eye(n)
    for a in layers:
        a_res = 0.5 * a + 0.5 * np.eye(n)
        a_res = a_res / a_res.sum(axis=-1, keepdims=True)
        rolled = a_res @ rolled
    return rolled


def _rows(target: Target) -> list[int]:
    if target.rollout_rows == "first":
        return [0]
    if target.rollout_rows == "focus":
        return [target.focus if target.focus >= 0 else len(target.ids) - 1]
    return list(range(len(target.ids)))


def attention_scores(target: Target) -> tuple[np.ndarray, np.ndarray]:
    """(rollout, raw last-layer attention) of the rows the output is read from, per scored token."""
    layers = attentions(target)
    rows = _rows(target)
    rolled = rollout_matrix(layers)[rows].mean(0)
    last = layers[-1][rows].mean(0)
    return rolled[target.positions], last[target.positions]
