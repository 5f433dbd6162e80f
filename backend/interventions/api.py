"""Role-level entry points of the Interventions tab: `/intervene` and `/sweep_heads`.

Each call loads the role's model through the hub (inside gpu_task), runs the text once as it
is and once with the spec's heads / sub-layers removed or scaled (hooks, removed after), checks
the result against the independent mechanism (edited weights), and returns plain JSON.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch

from backend import hub
from backend.hub import builders
from backend.runtime import budget, config
from backend.runtime.device import gpu_task
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int, check_text, one_of, opt_text
from backend.engines.attention.extract import readable_tokens
from backend.interventions import effects, hooks, spec as specs, sweep

ROLES = ("decoder", "encoder")
MAX_TOKENS = 64
MAX_NEW_TOKENS = 32
MAX_TOP_K = 20
EXAMPLES = {
    "decoder": ("The capital of France is", "L3H*=0, L5.mlp=0"),
    "encoder": ("The movie was wonderful and the actors were brilliant.", "L0.mlp=0, L1H*=0"),
}


def _say(progress, fraction: float, desc: str) -> None:
    if progress is not None:
        progress(fraction, desc)


def _load(model, text, override, progress):
    role = one_of("model", model, ROLES, default="decoder")
    text = check_text(text, "text")
    override = opt_text("override", override, max_chars=config.MAX_OVERRIDE_CHARS)
    lm = hub.load(role, override, progress)
    enc = lm.tokenizer(text, return_tensors="pt")
    n = int(enc["input_ids"].shape[1])
    if n > MAX_TOKENS:
        raise InputError(f"The text has {n} tokens; interventions take at most {MAX_TOKENS} "
                         "(each head of a sweep runs the whole text again). Shorten the text.")
    inputs = {k: v.to(lm.device) for k, v in enc.items()}
    lay = hooks.layout(lm.model)
    if (role == "decoder") == (lay.family == "bert"):
        raise InputError(f"This checkpoint is a {lay.family} model, not the kind the {role} view needs "
                         f"({'a language model' if role == 'decoder' else 'a BERT-style encoder'}).")
    tokens = readable_tokens(lm.tokenizer, enc["input_ids"][0].tolist())
    return role, text, lm, inputs, lay, tokens


def _shape(lay: hooks.Layout) -> dict:
    return {"family": lay.family, "num_layers": len(lay.layers), "num_heads": lay.n_heads, "head_dim": lay.head_dim}


def _shower(tokenizer):
    return lambda ids: readable_tokens(tokenizer, ids)


def _decoder_effects(lm, inputs, edits, tokens, new_tokens: int, top_k: int, progress) -> dict:
    ids, model, show = inputs["input_ids"], lm.model, _shower(lm.tokenizer)
    eos = lm.tokenizer.eos_token_id
    _say(progress, 0.2, "Running the model as it is")
    before = effects.decoder_run(model, ids, new_tokens, eos)
    budget.check("ran the model as it is", "Ask for fewer new tokens or a shorter text.")
    _say(progress, 0.5, "Running it with the spec applied")
    with hooks.ablate(model, edits):
        after = effects.decoder_run(model, ids, new_tokens, eos)
    budget.check("ran the model before and after", "Ask for fewer new tokens or a shorter text.")
    _say(progress, 0.8, "Checking against edited weights")
    check = effects.check(model, edits, lambda m: effects.decoder_run(m, ids).out, after.out)
    check["compared"] = "logits at every position"
    per_kl = effects.kl(before.out, after.out)
    flips = effects.flips(before.out, after.out, tokens, show)
    return {
        "next_token": {
            "after_token": tokens[-1],
            "position": len(tokens) - 1,
            "kl": float(per_kl[-1]),
            "top1_before": show([int(before.out[-1].argmax())])[0],
            "top1_after": show([int(after.out[-1].argmax())])[0],
            "top": effects.top_tokens(lm.tokenizer, before.out[-1], after.out[-1], top_k, show),
            "top_k": top_k,
        },
        "kl_mean": float(per_kl.mean()),
        "flips": flips,
        "num_flips": sum(f["flipped"] for f in flips),
        "continuation": {
            "new_tokens": new_tokens,
            "before": lm.tokenizer.decode(before.continuation),
            "after": lm.tokenizer.decode(after.continuation),
            "before_tokens": show(before.continuation),
            "after_tokens": show(after.continuation),
            "same": before.continuation == after.continuation,
            "finish_reason": before.finish_reason or after.finish_reason,
        },
        "check": check,
        "max_abs_logit_change": effects.max_diff(before.out, after.out),
    }


def _sentiment_model(lm, override):
    """The offline sentiment classifier, when it is a fine-tune of this very encoder and already
    built (a visitor's click never trains it): (LoadedModel or None, why not)."""
    r = hub.resolve("sentiment")
    if override or r.method != config.METHOD_FINETUNED:
        return None, "the sentiment model is not a fine-tune of this encoder, so the same heads mean nothing there"
    base = hub.resolve(builders.BUILDERS["sentiment"].base_role)
    if Path(base.location).resolve() != Path(hub.resolve("encoder").location).resolve():
        return None, "the sentiment model fine-tunes a different encoder"
    if not (hub.get_hub().is_loaded("sentiment") or builders.BUILDERS["sentiment"].cache_dir(base.location).exists()):
        return None, "the offline sentiment model is not built yet (make run builds it once)"
    return hub.load("sentiment"), ""


def _classify(lm, text: str) -> dict:
    enc = {k: v.to(lm.device) for k, v in lm.tokenizer(text, return_tensors="pt").items()}
    with torch.inference_mode():
        probs = torch.softmax(lm.model(**enc).logits[0].double(), -1)
    i = int(probs.argmax())
    return {"label": lm.model.config.id2label[i], "score": float(probs[i])}


def _sentiment(text: str, edits, lm, override) -> dict:
    slm, why = _sentiment_model(lm, override)
    if slm is None:
        return {"skipped": why}
    before = _classify(slm, text)
    with hooks.ablate(slm.model, edits):
        after = _classify(slm, text)
    return {"before": before, "after": after, "changed": before["label"] != after["label"],
            "model": slm.describe()}


def _encoder_effects(lm, inputs, edits, text: str, override, progress) -> dict:
    model = lm.model
    _say(progress, 0.2, "Running the encoder as it is")
    before = effects.encoder_run(model, inputs)
    _say(progress, 0.4, "Running it with the spec applied")
    with hooks.ablate(model, edits):
        after = effects.encoder_run(model, inputs)
    budget.check("ran the encoder before and after")
    _say(progress, 0.6, "Checking against edited weights")
    check = effects.check(model, edits, lambda m: effects.encoder_run(m, inputs).out, after.out)
    check["compared"] = "last hidden state of every token"
    cos = effects.cosine(effects.sentence_vector(before.out), effects.sentence_vector(after.out))
    token_cos = torch.nn.functional.cosine_similarity(before.out.double(), after.out.double(), dim=-1)
    _say(progress, 0.8, "The sentiment classifier before and after")
    return {
        "embedding": {"cosine": cos, "one_minus_cosine": 1.0 - cos, "dims": int(before.out.shape[-1])},
        "token_cosine": [round(float(c), 6) for c in token_cos],
        "sentiment": _sentiment(text, edits, lm, override),
        "check": check,
        "max_abs_hidden_change": effects.max_diff(before.out, after.out),
    }


@gpu_task(duration=60)
def intervene(model="decoder", text=EXAMPLES["decoder"][0], spec="", new_tokens=8, top_k=8, override=None,
              progress=None) -> dict:
    """`/intervene`: the text through the model as it is and with `spec` applied.

    Decoder: `next_token` (top tokens both ways, KL), `flips` per position, `continuation`
    (greedy, `new_tokens` each way). Encoder: `embedding` (cosine), `token_cosine`,
    `sentiment` (the offline classifier before/after, or why skipped). Both: `check` (the
    independent mechanism's max abs difference), `spec` as understood, `edits`, `model`.
    """
    edits_raw = specs.parse(spec)
    new_tokens = as_int("new_tokens", new_tokens, lo=0, hi=MAX_NEW_TOKENS)
    top_k = as_int("top_k", top_k, lo=1, hi=MAX_TOP_K)
    role, text, lm, inputs, lay, tokens = _load(model, text, override, progress)  # the text as checked
    edits = specs.resolve(edits_raw, len(lay.layers), lay.n_heads)
    start = time.perf_counter()
    if role == "decoder":
        result = _decoder_effects(lm, inputs, edits, tokens, new_tokens, top_k, progress)
    else:
        result = _encoder_effects(lm, inputs, edits, text, override, progress)
    _say(progress, 1.0, "Done")
    return {"role": role, "text": text, "tokens": tokens, "spec": specs.canonical(edits_raw),
            "edits": [e.as_dict() for e in edits], **_shape(lay), **result,
            "seconds": round(time.perf_counter() - start, 4), "model": lm.describe()}


@gpu_task(duration=60)
def sweep_heads(model="decoder", text=EXAMPLES["decoder"][0], layer=0, override=None, progress=None) -> dict:
    """`/sweep_heads`: every head of `layer` removed alone, ranked by the KL at the last
    position (decoder) or by 1 - cosine of the sentence embedding (encoder). Bounded by the
    request's time budget: `complete` false and `finish_reason` say when it stopped early."""
    as_int("layer", layer)
    role, text, lm, inputs, lay, tokens = _load(model, text, override, progress)  # the text as checked
    layer = as_int("layer", layer, lo=0, hi=len(lay.layers) - 1)
    if role == "decoder":
        run = lambda: effects.decoder_run(lm.model, inputs["input_ids"]).out  # noqa: E731
    else:
        run = lambda: effects.encoder_run(lm.model, inputs).out  # noqa: E731
    with budget.scope():
        result = sweep.sweep_layer(lm.model, layer, run, role == "decoder", progress)
    _say(progress, 1.0, "Done")
    return {"role": role, "text": text, "tokens": tokens, **_shape(lay), **result, "model": lm.describe()}


def model_shape(model="decoder", override=None) -> dict:
    """The layers and heads of the role's model (loaded through the hub, no forward): what the
    tab's layer and head pickers may offer before a run, so a 9-head decoder is never offered
    heads 9 to 11 that `/intervene` would then refuse."""
    role = one_of("model", model, ROLES, default="decoder")
    override = opt_text("override", override, max_chars=config.MAX_OVERRIDE_CHARS)
    lay = hooks.layout(hub.load(role, override).model)
    return {"role": role, **_shape(lay)}
