"""What an intervention changes, measured on one input (model-level: handed a model and ids).

Decoder: the next-token distribution at the last position before/after (top tokens both
ways, KL(before || after)), the top-1 prediction at every position (flips), and a short
greedy continuation each way. Encoder: the mean-pooled, normalised sentence embedding
before/after (cosine), and how far each token's last hidden state turned.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from backend.runtime import budget, precision
from backend.interventions import hooks
from backend.interventions.spec import Edit

TOLERANCE = 1e-5  # hooks vs edited weights, on float32 models


@dataclass
class Run:
    """One forward of the text (and, for a decoder, its greedy continuation)."""

    out: torch.Tensor  # decoder: logits (T, V); encoder: last hidden state (T, D)
    continuation: list[int]
    finish_reason: str | None = None


def _greedy(model, ids: torch.Tensor, first, new_tokens: int, eos: int | None) -> tuple[list[int], str | None]:
    """Greedy tokens after `ids`, one cached forward each; stops at EOS or the request's budget."""
    tokens: list[int] = []
    past = first.past_key_values
    nxt = int(first.logits[0, -1].argmax())
    with torch.inference_mode():
        for _ in range(new_tokens):
            tokens.append(nxt)
            if nxt == eos or len(tokens) == new_tokens:
                break
            if budget.expired():
                return tokens, budget.current().finish_reason
            step = model(input_ids=torch.tensor([[nxt]], device=ids.device), past_key_values=past, use_cache=True)
            past = step.past_key_values
            nxt = int(step.logits[0, -1].argmax())
    return tokens, None


def decoder_run(model, ids: torch.Tensor, new_tokens: int = 0, eos: int | None = None) -> Run:
    """Logits over the text (one forward, cached) and `new_tokens` greedy tokens after it."""
    with torch.inference_mode():
        first = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=new_tokens > 0)
    logits = first.logits[0].float()
    if new_tokens <= 0:
        return Run(logits, [])
    tokens, reason = _greedy(model, ids, first, new_tokens, eos)
    return Run(logits, tokens, reason)


def encoder_run(model, inputs: dict) -> Run:
    with torch.inference_mode():
        hidden = model(**inputs).last_hidden_state
    return Run(hidden[0].float(), [])


def kl(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """KL(before || after) in nats, per row of logits (float64)."""
    p = F.log_softmax(before.double(), -1)
    q = F.log_softmax(after.double(), -1)
    return (p.exp() * (p - q)).sum(-1).clamp(min=0.0)


def sentence_vector(hidden: torch.Tensor) -> torch.Tensor:
    """(T, D) -> (D,): mean over the tokens, length 1 (all-MiniLM-L6-v2's recipe; one text, no padding)."""
    return F.normalize(hidden.double().mean(0), dim=-1)


def cosine(before: torch.Tensor, after: torch.Tensor) -> float:
    return float(F.cosine_similarity(before.double(), after.double(), dim=-1).clamp(-1, 1))


def top_tokens(tokenizer, before: torch.Tensor, after: torch.Tensor, k: int, show) -> list[dict]:
    """The union of the top-k next tokens before and after, each with its probability both ways."""
    p, q = F.softmax(before.double(), -1), F.softmax(after.double(), -1)
    ids = list(dict.fromkeys(p.topk(k).indices.tolist() + q.topk(k).indices.tolist()))
    ids.sort(key=lambda i: (-float(p[i]), i))
    return [{"id": i, "token": show([i])[0], "p_before": round(float(p[i]), 6), "p_after": round(float(q[i]), 6),
             "rank_before": int((p > p[i]).sum()), "rank_after": int((q > q[i]).sum())} for i in ids]


def flips(before: torch.Tensor, after: torch.Tensor, tokens: list[str], show) -> list[dict]:
    """At each position, the top-1 next token before and after, and whether it changed."""
    a, b = before.argmax(-1).tolist(), after.argmax(-1).tolist()
    per_kl = kl(before, after).tolist()
    return [{"position": t, "token": tokens[t], "next_before": show([a[t]])[0], "next_after": show([b[t]])[0],
             "flipped": a[t] != b[t], "kl": round(per_kl[t], 6)} for t in range(len(tokens))]


def max_diff(x: torch.Tensor, y: torch.Tensor) -> float:
    return float((x.float() - y.float()).abs().max()) if x.numel() else 0.0


def check(model, edits: list[Edit], run, reference: torch.Tensor) -> dict:
    """The same edits by the independent mechanism (edited weights): how far from the hooks' result.

    `run(m)` runs model `m` (the hooks or edited weights in place) and returns what is compared;
    `reference` is the hooks' result on `model`. Compared in float32: a bf16/fp16 model rounds
    x*s and W*s differently (8 or 11 bits of mantissa), so both mechanisms then run again on its
    float32 twin (the same weights) and the rounding is named, never reported as a mismatch.
    """
    name = precision.dtype_name(model)
    twin = precision.float32_twin(model)
    if twin is not model:
        with hooks.ablate(twin, edits):
            reference = run(twin)
    with hooks.edited_weights(twin, edits):
        theirs = run(twin)
    diff = max_diff(reference, theirs)
    tol = tolerance(edits, reference)
    return {"mechanism": "output projections run with edited weights (head columns scaled, sub-layer zeroed)",
            "max_abs_diff": diff, "tolerance": tol, "within_tolerance": diff <= tol, "compared_in": "float32",
            "model_dtype": name, "rounding_note": precision.rounding_note(
                name, compared="So both ways ran again in float32 on the same weights for this check")}


def tolerance(edits: list[Edit], reference: torch.Tensor) -> float:
    """1e-5 when every factor is 0 or 1 (then both ways compute the same products: exact in
    practice); for other factors, x*s and W*s round differently in float32 and the difference
    grows with the values through the layers, so 1e-5 relative to the largest output value."""
    if all(e.scale in (0.0, 1.0) for e in edits) or not reference.numel():
        return TOLERANCE
    return TOLERANCE * max(1.0, float(reference.abs().max()))
