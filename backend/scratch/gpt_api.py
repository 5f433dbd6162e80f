"""The From scratch tab's tiny GPT (chapter 10): plan, train (streamed), stop, download.

`plan_gpt` says before any training how long the run should take (at the rate measured in
this process, or a rough guess that says so) and refuses a run that cannot fit one request's
time budget, naming the most steps that would. `train_gpt_iter` yields events ("plan",
"step", "eval", "done") and leaves the model in the session, also when stopped early.
`export_gpt` zips a `save_pretrained` folder with its tokenizer and a model card. The plan, the
session's run, Stop and the zip are the encoder-decoder's too (trained_run.py).
"""

from __future__ import annotations

import time
from typing import Iterator

from backend.engines.scratch import corpora, tiny_gpt
from backend.hub import session_models
from backend.runtime.errors import InputError
from backend.runtime.validation import as_float, as_int, one_of
from backend.engines.scratch import run_settings
from backend.engines.scratch.run_settings import GPT_DEFAULTS as DEFAULTS
from backend.scratch import fit, trained_run
from backend.scratch.gpt_store import Model, get_store

LIMITS = dict(steps=(1, 5000), layers=(1, 6), heads=(1, 8), width=(16, 256), context=(16, 128), batch=(1, 64),
              eval_every=(1, 5000), seed=(0, 2**31 - 1), vocab_size=(100, 8000))
STEP_WORK, EVAL_WORK = "tiny-GPT steps", "tiny-GPT evaluations"  # measured per model shape (rates.py)
GUESS_PER_S = 1.5e9  # parameters x tokens a second: a busy 2-core CPU did 1.9e9 (0.37M parameters x 1,024 tokens)
STEP_OVERHEAD_S = 0.01  # a step's fixed cost, whatever the size (it dominates a very small model)
HEADROOM = trained_run.HEADROOM  # the plan may use this share of the request's budget


def _settings(steps, layers, heads, width, context, batch, learning_rate, eval_every, temperature, seed) -> dict:
    lim = LIMITS
    out = {k: as_int(k, v, lo=lim[k][0], hi=lim[k][1]) for k, v in
           (("steps", steps), ("layers", layers), ("heads", heads), ("width", width), ("context", context),
            ("batch", batch), ("eval_every", eval_every), ("seed", seed))}
    if out["width"] % out["heads"]:
        raise InputError(f"width ({out['width']}) must be a multiple of heads ({out['heads']}): each head gets "
                         "width / heads dimensions.")
    out["learning_rate"] = as_float("learning_rate", learning_rate, lo=1e-5, hi=0.1)
    out["temperature"] = as_float("temperature", temperature, lo=0.0, hi=2.0)
    return out


def estimate_params(vocab: int, layers: int, width: int, context: int) -> int:
    """GPT-2's parameter count: tied embeddings + positions + 12 w^2 + 13 w per block + final norm."""
    return vocab * width + context * width + layers * (12 * width * width + 13 * width) + 2 * width


def _shape(s: dict, vocab: int) -> tuple:
    return (s["layers"], s["width"], s["heads"], s["context"], s["batch"], vocab)


def _plan(s: dict, vocab: int) -> dict:
    params = estimate_params(vocab, s["layers"], s["width"], s["context"])
    steps_per_s, evals_per_s, measured = trained_run.rates((STEP_WORK, *_shape(s, vocab)), (EVAL_WORK, *_shape(s, vocab)))
    per_step = 1 / steps_per_s if steps_per_s else STEP_OVERHEAD_S + params * s["batch"] * s["context"] / GUESS_PER_S
    per_eval = 1 / evals_per_s if evals_per_s else (
        (tiny_gpt.SAMPLE_TOKENS + 1) * STEP_OVERHEAD_S / 3
        + params * s["context"] * (tiny_gpt.EVAL_BATCHES * s["batch"] + tiny_gpt.SAMPLE_TOKENS) / 3 / GUESS_PER_S)
    return {**trained_run.timed_plan(s, params, per_step, per_eval, measured, LIMITS["steps"][1]),
            "device": tiny_gpt.DEVICE, "device_note": tiny_gpt.DEVICE_NOTE}


def _vocab(scheme: str, vocab_size) -> int:
    """The vocabulary the model will have; a bad vocab_size is refused even when bytes ignore it
    (None or 0: not given)."""
    if scheme == "bytes" and (vocab_size is None or (isinstance(vocab_size, int) and not isinstance(vocab_size, bool)
                                                     and vocab_size == 0)):
        return 256
    asked = as_int("vocab_size", vocab_size, lo=100, hi=8000)
    return 256 if scheme == "bytes" else asked


def plan_gpt(scheme="bytes", vocab_size=DEFAULTS["vocab_size"], steps=DEFAULTS["steps"], layers=DEFAULTS["layers"],
             heads=DEFAULTS["heads"], width=DEFAULTS["width"], context=DEFAULTS["context"], batch=DEFAULTS["batch"],
             learning_rate=DEFAULTS["learning_rate"], eval_every=DEFAULTS["eval_every"],
             temperature=DEFAULTS["temperature"], seed=DEFAULTS["seed"]) -> dict:
    """The run's plan (no model built, no text read): parameters, seconds, whether it fits."""
    scheme = one_of("tokens", scheme, tiny_gpt.SCHEMES, default="bytes")
    s = _settings(steps, layers, heads, width, context, batch, learning_rate, eval_every, temperature, seed)
    return {**_plan(s, _vocab(scheme, vocab_size)), "settings": {**s, "tokens": scheme}}


def _refuse_unless_fits(plan: dict) -> None:
    trained_run.refuse_unless_fits(plan, "model", "fewer layers, a smaller width or context")


def _data(scheme: str, vocab: int, corpus, text, upload, context: int):
    what, body = corpora.corpus_text(corpus, text, upload)
    tok = tiny_gpt.make_tokenizer(scheme, body, vocab)
    ids = tiny_gpt.encode(tok, body)
    need = 10 * (context + 2)
    if len(ids) < need:
        raise InputError(f"The text is too short for a context of {context}: it makes {len(ids):,} tokens; the tiny "
                         f"GPT needs at least {need:,} (10 x (context + 2), so the validation part holds a window). "
                         "Use more text or a shorter context.")
    return what, body, tok, tiny_gpt.Data.split(ids, context)


def train_gpt_iter(session_id: str, corpus="glossary", text: str | None = None, upload=None, scheme="bytes",
                   vocab_size=DEFAULTS["vocab_size"], steps=DEFAULTS["steps"], layers=DEFAULTS["layers"],
                   heads=DEFAULTS["heads"], width=DEFAULTS["width"], context=DEFAULTS["context"],
                   learning_rate=DEFAULTS["learning_rate"], eval_every=DEFAULTS["eval_every"],
                   temperature=DEFAULTS["temperature"], seed=DEFAULTS["seed"], batch=DEFAULTS["batch"],
                   prompt: str = "") -> Iterator[dict]:
    """Plan, check, train; yields {"event": "plan" | "step" | "eval" | "done", ...}. The model stays
    in the session (also after Stop or the time budget, with the steps that ran)."""
    plan = plan_gpt(scheme, vocab_size, steps, layers, heads, width, context, batch, learning_rate, eval_every,
                    temperature, seed)
    _refuse_unless_fits(plan)
    s, scheme = plan["settings"], plan["settings"]["tokens"]
    with trained_run.session_run(get_store(), session_id, plan["parameters"] * 4) as run:
        out = run.outcome
        t0 = time.perf_counter()
        planned_vocab = _vocab(scheme, vocab_size)  # the rate's key (a BPE may learn fewer tokens than asked)
        what, body, tok, data = _data(scheme, planned_vocab, corpus, text, upload, s["context"])
        model = tiny_gpt.build_model(tok.get_vocab_size(), s["layers"], s["heads"], s["width"], s["context"], s["seed"])
        params = tiny_gpt.param_count(model)
        yield {"event": "plan", **plan, "parameters": params, "corpus": what, "tokens": len(data.train) + len(data.val),
               "unigram_entropy": round(tiny_gpt.unigram_entropy(data.val), 4)}
        settings = tiny_gpt.Settings(steps=s["steps"], batch=s["batch"], learning_rate=s["learning_rate"],
                                     eval_every=s["eval_every"], temperature=s["temperature"], seed=s["seed"],
                                     prompt=str(prompt or "")[:200], report_every=run_settings.report_every(s["steps"]))
        trained = run.trained = Model(model, tok, {"corpus": what, "tokens": scheme, "settings": s})

        def finish():  # also when the caller stops iterating: the model so far is described and kept
            return {**_result(plan, s, scheme, what, body, data, tok, params, out, time.perf_counter() - t0),
                    "model_box": trained.name}

        run.describe = finish
        yield from tiny_gpt.train_steps(model, tok, data, settings, stop=run.session.stop, outcome=out)
        trained.model = out.model
        result = finish()
        trained.info.update(result)
        trained_run.measured((STEP_WORK, *_shape(s, planned_vocab)), (EVAL_WORK, *_shape(s, planned_vocab)), out,
                             result["train_seconds"])
        yield {"event": "done", "result": result}


def _tokenizer_kwargs(m) -> dict:
    """The transformers wrapper's settings for the session's tokenizer (a BPE has an unknown token)."""
    return {"unk_token": "[UNK]" if m.info["tokens"] == "bpe" else None}


def _offered(name: str) -> dict | None:
    """The session's tiny GPT for the model box of Anatomy and Decoding (hub.session_models)."""
    m = get_store().by_name(name)
    if m is None:
        return None
    if m.hf_tokenizer is None:
        from transformers import PreTrainedTokenizerFast

        m.hf_tokenizer = PreTrainedTokenizerFast(tokenizer_object=m.tokenizer, **_tokenizer_kwargs(m))
    if getattr(m.model.config, "_attn_implementation", "eager") != "eager":
        m.model.set_attn_implementation("eager")  # the tabs read its attention weights (SDPA returns none)
    steps, corpus = m.info.get("steps_run", 0), m.info["corpus"]
    return {"model": m.model, "tokenizer": m.hf_tokenizer, "kind": "causal_lm", "roles": ("decoder",),
            "checkpoint": f"tiny GPT you trained ({m.info.get('parameters', 0):,} parameters, "
                          f"{steps:,} steps, {m.info['tokens']})",
            "note": "trained from scratch in the From scratch tab on "
                    f"{corpus['what'] if isinstance(corpus, dict) else corpus}"}


session_models.offer("tinygpt", _offered)


def _result(plan, s, scheme, what, body, data, tok, params, out, total_s) -> dict:
    elapsed = out.seconds or total_s  # 0 until the loop ends: a stream closed early counts up to now
    train_s = max(1e-6, elapsed - sum(e["seconds"] for e in out.evals))
    last = out.evals[-1] if out.evals else {}
    return {
        "corpus": {"what": what, "chars": len(body), "train_tokens": len(data.train), "val_tokens": len(data.val)},
        "tokens": scheme, "vocab_size": tok.get_vocab_size(),
        "settings": s, "parameters": params, "steps": s["steps"], "steps_run": out.steps_run,
        "stopped": out.stopped, "losses": out.losses,
        "evals": [{k: e[k] for k in ("step", "val_loss", "sample")} for e in out.evals],
        "samples": [{"step": e["step"], "text": e["sample"]} for e in out.evals],
        "final": {"train_loss": out.losses[-1] if out.losses else None, "val_loss": last.get("val_loss"), "val_step": last.get("step"),
                  "train_loss_mean_last_10": round(sum(out.losses[-10:]) / len(out.losses[-10:]), 4)
                  if out.losses else None},
        "unigram_entropy": round(tiny_gpt.unigram_entropy(data.val), 4),
        "fit": fit.overfitting(out.losses, out.evals),
        "seconds": round(total_s, 2), "train_seconds": round(train_s, 2),
        "tokens_per_s": round(out.steps_run * s["batch"] * s["context"] / train_s, 1),
        "plan": {"seconds": plan["seconds"], "basis": plan["basis"]},
    }


def train_gpt(session_id: str, *args, **kwargs) -> dict:
    """`train_gpt_iter` run to the end -> its result."""
    return trained_run.to_the_end(train_gpt_iter(session_id, *args, **kwargs))


def stop_gpt(session_id: str, wait_s: float = 0.0) -> dict:
    """Ask the session's tiny-GPT run to stop after its current step (the model so far is kept).
    `wait_s`: wait that long for it to end; "ended": it has, its result is out."""
    return trained_run.stop(get_store(), session_id, wait_s)


def drop_gpt_session(session_id: str) -> None:
    trained_run.drop(get_store(), session_id)


def generate_gpt(session_id: str, prompt: str = "", max_new_tokens=80, temperature=0.0, seed=0) -> dict:
    """Continue `prompt` with the session's tiny GPT (greedy at temperature 0)."""
    m = get_store().trained(session_id)
    n = as_int("max_new_tokens", max_new_tokens, lo=1, hi=500)
    temperature = as_float("temperature", temperature, lo=0.0, hi=2.0)
    ids = m.tokenizer.encode(str(prompt or "")).ids or [0]
    new = tiny_gpt.sample_task(m.model, ids, n, temperature, as_int("seed", seed, lo=0))
    return {"prompt_ids": ids, "ids": new, "text": m.tokenizer.decode(new)}


CARD = """---
library_name: transformers
tags: [gpt2, from-scratch, transformers-lab]
---
# A tiny GPT trained from scratch in Transformers Lab

A GPT-2 architecture ({layers} layers, {heads} heads, width {width}, context {context}; {params:,} parameters)
trained from random weights for {steps_run:,} steps (batch {batch}, AdamW, learning rate {lr:g}, seed {seed})
on {corpus}. Final train loss {train}, validation loss {val} (nats per token; the validation text's unigram
entropy is {entropy}).

Tokens: {tokens}

    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained("{stem}")
    model = AutoModelForCausalLM.from_pretrained("{stem}")
    ids = tok("The ", return_tensors="pt").input_ids
    print(tok.decode(model.generate(ids, max_new_tokens=40, do_sample=False)[0]))
"""
TOKEN_NOTES = {
    "bytes": "byte-level: every UTF-8 byte is one token and its id is the byte's value (0-255), written as "
             "a byte-level BPE with no merges (GPT-2's byte alphabet), so decoding gives the text back.",
    "bpe": "the From scratch tab's BPE (the `tokenizers` library, Whitespace pre-tokenizer, '[UNK]'), trained "
           "on the same text; it keeps no spaces, so decoded text has a space between tokens.",
}


def _card(m, stem: str) -> str:
    s, f = m.info["settings"], m.info["final"]
    return CARD.format(
        layers=s["layers"], heads=s["heads"], width=s["width"], context=s["context"], params=m.info["parameters"],
        steps_run=m.info["steps_run"], batch=s["batch"], lr=s["learning_rate"], seed=s["seed"],
        corpus=m.info["corpus"]["what"], train=f["train_loss"], val=f["val_loss"], entropy=m.info["unigram_entropy"],
        tokens=TOKEN_NOTES[m.info["tokens"]], stem=stem)


def export_gpt(session_id: str, root: str | None = None) -> dict:
    """The session's tiny GPT as a zip of a `save_pretrained` folder + tokenizer + model card."""
    return trained_run.export(get_store(), session_id, root,
                              lambda m: f"tiny-gpt-{m.info['tokens']}-{m.info['steps_run']}-steps",
                              _tokenizer_kwargs, _card)
