"""The From scratch tab's tiny encoder-decoder (chapter 3's architecture): plan, train (streamed),
stop, translate one input and look at its three kinds of attention, download.

Same session rules as the tiny GPT, from the same code (trained_run.py): the plan says before any training how long the
run should take and refuses one that cannot fit one request's time budget; the model stays in
the caller's session, also when stopped early (with the steps that ran); the download is a zip
of a `save_pretrained` folder with its tokenizer and a model card.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Iterator

import numpy as np

from backend.engines.scratch import run_settings, seq2seq, seq2seq_data, tiny_gpt
from backend.engines.scratch.run_settings import SEQ2SEQ_DEFAULTS as DEFAULTS
from backend.runtime.errors import InputError
from backend.runtime.validation import as_float, as_int, check_text
from backend.scratch import trained_run
from backend.scratch.seq2seq_store import Model, get_store

LIMITS = dict(steps=(1, 3000), layers=(1, 4), heads=(1, 8), width=(16, 256), batch=(4, 256), eval_every=(1, 3000),
              seed=(0, 2**31 - 1))
STEP_WORK, EVAL_WORK = "seq2seq steps", "seq2seq evaluations"  # measured per model shape (rates.py)
GUESS_PER_S = 3e9  # parameters x tokens a second: a busy 2-core CPU did ~3.3e9 (177k parameters x 64 x 23 tokens)
STEP_OVERHEAD_S = 0.02
TOKENS_PER_PAIR = 24  # ~13 source + 11 target tokens
HEADROOM = trained_run.HEADROOM
MAX_INPUT_CHARS = 200
SHOWN_TEST = 12  # test rows in the result: the first ones, then mistakes


@lru_cache(maxsize=1)
def vocab_size() -> int:
    """The shipped training pairs' vocabulary (a fresh tokenizer is built per run: none is shared)."""
    return seq2seq.build_tokenizer(seq2seq_data.load("train")).get_vocab_size()


def _settings(steps, layers, heads, width, batch, learning_rate, eval_every, seed) -> dict:
    lim = LIMITS
    out = {k: as_int(k, v, lo=lim[k][0], hi=lim[k][1]) for k, v in
           (("steps", steps), ("layers", layers), ("heads", heads), ("width", width), ("batch", batch),
            ("eval_every", eval_every), ("seed", seed))}
    if out["width"] % out["heads"]:
        raise InputError(f"width ({out['width']}) must be a multiple of heads ({out['heads']}): each head gets "
                         "width / heads dimensions.")
    out["learning_rate"] = as_float("learning_rate", learning_rate, lo=1e-5, hi=0.1)
    return out


def estimate_params(vocab: int, layers: int, width: int) -> int:
    """BART's parameter count: shared embeddings, two position tables (+2 offset each), two embedding
    norms; an encoder layer is 4 projections + a feed-forward (2w wide) + 2 norms; a decoder layer adds
    the cross-attention's 4 projections and a third norm."""
    w, f, positions = width, run_settings.SEQ2SEQ_FFN_SCALE * width, 2 * (max(seq2seq.MAX_SOURCE, seq2seq.MAX_TARGET) + 4)
    attn, ffn, norm = 4 * (w * w + w), 2 * w * f + f + w, 2 * w
    return vocab * w + positions * w + 2 * norm + layers * (attn + ffn + 2 * norm) + layers * (2 * attn + ffn + 3 * norm)


def _shape(s: dict) -> tuple:
    return (s["layers"], s["width"], s["heads"], s["batch"])


def plan_seq2seq(steps=DEFAULTS["steps"], layers=DEFAULTS["layers"], heads=DEFAULTS["heads"], width=DEFAULTS["width"],
                 batch=DEFAULTS["batch"], learning_rate=DEFAULTS["learning_rate"], eval_every=DEFAULTS["eval_every"],
                 seed=DEFAULTS["seed"]) -> dict:
    """The run's plan (no model built): parameters, seconds (steps, validation checks, the test), whether it fits."""
    s = _settings(steps, layers, heads, width, batch, learning_rate, eval_every, seed)
    params = estimate_params(vocab_size(), s["layers"], s["width"])
    steps_per_s, evals_per_s, measured = trained_run.rates((STEP_WORK, *_shape(s)), (EVAL_WORK, *_shape(s)))
    per_step = 1 / steps_per_s if steps_per_s else STEP_OVERHEAD_S + params * s["batch"] * TOKENS_PER_PAIR / GUESS_PER_S
    n_val = seq2seq_data.SIZES["validation"]
    per_eval = 1 / evals_per_s if evals_per_s else 0.2 + params * n_val * TOKENS_PER_PAIR * 6 / GUESS_PER_S
    test_s = per_eval * seq2seq_data.SIZES["test"] / n_val  # the test after the last step
    return {**trained_run.timed_plan(s, params, per_step, per_eval, measured, LIMITS["steps"][1], test_s),
            "settings": s, "device": tiny_gpt.DEVICE, "device_note": tiny_gpt.DEVICE_NOTE}


def _refuse_unless_fits(plan: dict) -> None:
    trained_run.refuse_unless_fits(plan, "encoder-decoder", "fewer layers, a smaller width")


def _data_card() -> dict:
    return {"what": "dates written in English words -> ISO digits (assets/data/toy_translation)",
            **{f"{k}_pairs": len(seq2seq_data.load(k)) for k in seq2seq_data.SPLITS}}


@seq2seq.gpu_task(duration=60)
def _test_task(model, tok, pairs):
    with seq2seq.one_thread():
        return seq2seq.evaluate(model, tok, pairs)


def _test_rows(ev: dict) -> list[dict]:
    rows = ev["rows"][:SHOWN_TEST]
    wrong = [r for r in ev["rows"][SHOWN_TEST:] if not r["right"]][:SHOWN_TEST]
    return rows + wrong


def train_seq2seq_iter(session_id: str, steps=DEFAULTS["steps"], layers=DEFAULTS["layers"], heads=DEFAULTS["heads"],
                       width=DEFAULTS["width"], learning_rate=DEFAULTS["learning_rate"], seed=DEFAULTS["seed"],
                       batch=DEFAULTS["batch"], eval_every=DEFAULTS["eval_every"]) -> Iterator[dict]:
    """Plan, check, train, test; yields {"event": "plan" | "step" | "eval" | "test" | "done", ...}. The model
    stays in the session (also after Stop or the time budget, with the steps that ran)."""
    plan = plan_seq2seq(steps, layers, heads, width, batch, learning_rate, eval_every, seed)
    _refuse_unless_fits(plan)
    s = plan["settings"]
    with trained_run.session_run(get_store(), session_id, plan["parameters"] * 4) as run:
        out = run.outcome
        t0 = time.perf_counter()
        train, val, test = (list(seq2seq_data.load(k)) for k in seq2seq_data.SPLITS)
        tok = seq2seq.build_tokenizer(train)
        model = seq2seq.build_model(tok.get_vocab_size(), s["layers"], s["heads"], s["width"], run_settings.SEQ2SEQ_FFN_SCALE * s["width"],
                                    s["seed"], tok)
        params = seq2seq.param_count(model)
        yield {"event": "plan", **plan, "parameters": params, "data": _data_card()}
        settings = seq2seq.Settings(steps=s["steps"], batch=s["batch"], learning_rate=s["learning_rate"],
                                    eval_every=s["eval_every"], seed=s["seed"],
                                    report_every=run_settings.report_every(s["steps"]))
        trained = run.trained = Model(model, tok, {"settings": s, "parameters": params, "corpus": "toy dates"})
        run.describe = lambda: _result(plan, s, params, out, None, time.perf_counter() - t0, 0.0, 0.0)
        yield from seq2seq.train_steps(model, tok, train, val, settings, stop=run.session.stop, outcome=out)
        trained.model = out.model
        train_s = max(1e-6, out.seconds - sum(e["seconds"] for e in out.evals))
        t1 = time.perf_counter()
        ev = _test_task(out.model, tok, test) if out.steps_run and out.stopped != "stopped" else None  # skipped on Stop
        test_s = time.perf_counter() - t1
        result = _result(plan, s, params, out, ev, time.perf_counter() - t0, train_s, test_s)
        trained.info.update(result)
        trained_run.measured((STEP_WORK, *_shape(s)), (EVAL_WORK, *_shape(s)), out, train_s)
        yield {"event": "done", "result": result}


def _result(plan, s, params, out, ev, total_s, train_s, test_s) -> dict:
    last = out.evals[-1] if out.evals else {}
    test = None if ev is None else {"exact_match": ev["exact_match"], "right": ev["right"], "items": ev["items"],
                                    "seconds": round(test_s, 2), "rows": _test_rows(ev)}
    return {
        "data": _data_card(), "settings": s, "parameters": params, "steps": s["steps"], "steps_run": out.steps_run,
        "stopped": out.stopped, "losses": out.losses,
        "evals": [{k: e[k] for k in ("step", "val_loss", "val_exact_match", "samples")} for e in out.evals],
        "final": {"train_loss": out.losses[-1] if out.losses else None, "val_loss": last.get("val_loss"), "val_step": last.get("step"),
                  "val_exact_match": last.get("val_exact_match")},
        "test": test, "seconds": round(total_s, 2), "train_seconds": round(train_s, 2),
        "steps_per_s": round(out.steps_run / train_s, 2) if train_s > 0 else None,
        "plan": {"seconds": plan["seconds"], "basis": plan["basis"]},
    }


def train_seq2seq(session_id: str, *args, **kwargs) -> dict:
    """`train_seq2seq_iter` run to the end -> its result."""
    return trained_run.to_the_end(train_seq2seq_iter(session_id, *args, **kwargs))


def stop_seq2seq(session_id: str, wait_s: float = 0.0) -> dict:
    """As stop_gpt, for the session's tiny encoder-decoder."""
    return trained_run.stop(get_store(), session_id, wait_s)


def drop_seq2seq_session(session_id: str) -> None:
    trained_run.drop(get_store(), session_id)


def _text(text) -> str:
    text = check_text(text, "text", what="text (a date in words)")
    if len(text) > MAX_INPUT_CHARS:
        raise InputError(f"The text is {len(text):,} characters long; at most {MAX_INPUT_CHARS} are allowed "
                         "(the model was trained on dates of up to 62 characters).")
    return text


def inspect_toy(session_id: str, text: str = "", layer=-1, head=0) -> dict:
    """Translate `text` with the session's model and return all its attentions (numpy, layer x head x
    query x key) plus the recomputed cross-attention of (layer, head) and its difference from the model's."""
    text = _text(text)  # the inputs first (a bad value is named even with no model yet), then the model's range
    layer = as_int("layer", layer, lo=-1, hi=LIMITS["layers"][1] - 1)
    head = as_int("head", head, lo=0, hi=LIMITS["heads"][1] - 1)
    m = get_store().trained(session_id)
    layers, heads = m.model.config.decoder_layers, m.model.config.decoder_attention_heads
    layer = as_int("layer", layer, lo=-1, hi=layers - 1)
    layer = layers - 1 if layer == -1 else layer
    head = as_int("head", head, lo=0, hi=heads - 1)
    r = seq2seq.inspect(m.model, m.tokenizer, text, layer, head)
    unk = seq2seq.UNK
    unknown = [w for w, t in zip(_words(m.tokenizer, text), r["source_tokens"]) if t == unk]
    return {**r, "input": text, "layer": layer, "head": head, "layers": layers, "heads": heads, "unknown_words": unknown,
            "steps_run": m.info.get("steps_run")}


def _words(tok, text: str) -> list[str]:
    return [w for w, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text))]


def _rounded(a: np.ndarray) -> list:
    return np.round(np.asarray(a, dtype=np.float64), 4).tolist()


def alignment(cross: np.ndarray, out_tokens: list[str], src_tokens: list[str]) -> list[dict]:
    """For each written token, the input token it attends to most (in one head's cross-attention)."""
    return [{"output": o, "input": src_tokens[int(np.argmax(row))], "weight": round(float(np.max(row)), 4)}
            for o, row in zip(out_tokens, cross)]


def facts(r: dict) -> dict:
    """Plain numbers behind the figures' "What to notice" lines, for the shown (layer, head):
    cross: for the year, month and day digits, the input tokens they attend to most and where those
    sit in the input; encoder: rows whose strongest key is the token itself or a neighbour; decoder:
    rows whose strongest key is the previous token, or (further back) the start token <s>."""
    lh = (r["layer"], r["head"])
    cross, enc, dec = r["cross_attentions"][lh], r["encoder_attentions"][lh], r["decoder_attentions"][lh]
    src, out = r["source_tokens"], r["output_tokens"]
    parts, part = {"year": [], "month": [], "day": []}, 0
    for i, t in enumerate(out):
        if t == "-":
            part += 1
        elif t != seq2seq.EOS and part < 3:
            parts[("year", "month", "day")[part]].append(i)
    groups = {}
    for name, rows in parts.items():
        keys = [int(np.argmax(cross[i])) for i in rows]
        groups[name] = {"digits": [out[i] for i in rows], "looks_at": [src[k] for k in keys], "positions": keys}
    enc_near = sum(abs(int(np.argmax(row)) - i) <= 1 for i, row in enumerate(enc))
    enc_top = np.bincount([int(np.argmax(row)) for row in enc], minlength=len(src))
    dec_prev = sum(int(np.argmax(row)) == i - 1 for i, row in enumerate(dec) if i > 0)
    dec_start = sum(int(np.argmax(row)) == 0 for i, row in enumerate(dec) if i > 1)  # <s> not just before
    return {"cross": groups, "source_length": len(src), "encoder_rows": len(src), "encoder_near": int(enc_near),
            "encoder_top": {"token": src[int(np.argmax(enc_top))], "position": int(np.argmax(enc_top)),
                            "rows": int(enc_top.max())},
            "decoder_rows": max(0, len(out) - 1), "decoder_previous": int(dec_prev), "decoder_start": int(dec_start)}


def translate_toy(session_id: str, text: str = "", layer=-1, head=0) -> dict:
    """/translate_toy's JSON: the greedy output, tokens, the three attentions of (layer, head), the check."""
    return toy_json(inspect_toy(session_id, text, layer, head))


def toy_json(r: dict) -> dict:
    """The JSON of an `inspect_toy` result: plain lists for the shown (layer, head) only."""
    lh = (r["layer"], r["head"])
    return {
        "input": r["input"], "output": r["output"], "source_tokens": r["source_tokens"],
        "output_tokens": r["output_tokens"], "decoder_input_tokens": r["decoder_input_tokens"],
        "confidence": r["confidence"], "unknown_words": r["unknown_words"], "layer": r["layer"], "head": r["head"],
        "layers": r["layers"], "heads": r["heads"],
        "cross_attention": _rounded(r["cross_attentions"][lh]), "encoder_attention": _rounded(r["encoder_attentions"][lh]),
        "decoder_attention": _rounded(r["decoder_attentions"][lh]),
        "alignment": alignment(r["cross_attentions"][lh], r["output_tokens"], r["source_tokens"]),
        "facts": facts(r),
        "check": {"max_abs_diff": r["max_abs_diff"], "below_1e-4": r["max_abs_diff"] < 1e-4,
                  "how": "softmax(Q K^T / sqrt(d)): Q from the decoder state entering this cross-attention block "
                         "(x W_q + b_q), K from the encoder's output (x W_k + b_k), this head's d dimensions"},
    }


CARD = """---
library_name: transformers
tags: [bart, encoder-decoder, from-scratch, transformers-lab]
---
# A tiny encoder-decoder trained from scratch in Transformers Lab

A BART architecture ({layers} encoder and {layers} decoder layers, {heads} heads, width {width}; {params:,}
parameters) trained from random weights for {steps_run:,} steps (batch {batch}, AdamW, learning rate {lr:g},
seed {seed}) to translate dates written in English words into ISO digits ("the twenty-third of march , two
thousand and four" -> "2004-03-23"). Held-out exact match: {test}.

Tokens: word level, lowercased; words split at spaces and punctuation, digits one by one; the decoder fuses
tokens, so the output decodes with no spaces.

    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained("{stem}")
    model = AutoModelForSeq2SeqLM.from_pretrained("{stem}")
    ids = tok("the twenty-third of march , two thousand and four", return_tensors="pt").input_ids
    print(tok.decode(model.generate(ids, max_new_tokens=12, do_sample=False)[0], skip_special_tokens=True))
"""


def _card(m, stem: str) -> str:
    s, t = m.info["settings"], m.info.get("test")
    return CARD.format(
        layers=s["layers"], heads=s["heads"], width=s["width"], params=m.info["parameters"],
        steps_run=m.info["steps_run"], batch=s["batch"], lr=s["learning_rate"], seed=s["seed"], stem=stem,
        test=f"{t['exact_match']:.1%} of {t['items']} dates never seen in training" if t else "not measured (stopped)")


def export_seq2seq(session_id: str, root: str | None = None) -> dict:
    """The session's encoder-decoder as a zip of a `save_pretrained` folder + tokenizer + model card."""
    return trained_run.export(get_store(), session_id, root, lambda m: f"tiny-seq2seq-dates-{m.info['steps_run']}-steps",
                              lambda m: {"pad_token": seq2seq.PAD, "bos_token": seq2seq.BOS, "eos_token": seq2seq.EOS,
                                         "unk_token": seq2seq.UNK}, _card)
