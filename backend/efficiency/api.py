"""`/efficiency`: the decoder as served (fp32 on CPU) against its int8 copy, and the encoder too.

Decoder: size on disk and in memory, greedy tok/s (median of the timed runs, at least 3),
perplexity on the shipped texts, greedy agreement on the shipped prompts (first 8 and first
`new_tokens` tokens identical) and where each prompt's outputs first diverge.
Encoder (the embedding-similarity classifier of the Pipelines tab): latency against agreement
of the int8 labels with the fp32 ones, on the sentences of the shipped texts (sentiment) and
on the texts themselves (zero-shot topic).

The int8 copies are built once per process (tens of seconds on 2 cores) and cached; the
served fp32 models are never changed. The defaults fit an interactive run of about a minute
on a CPU; `bench/efficiency.py` runs all 20 prompts and texts.
"""

from __future__ import annotations

import re
import time

import numpy as np

from backend.runtime import budget, stats
from backend import hub
from backend.runtime.device import gpu_task
from backend.efficiency import measure
from backend.engines.compression import quantize
from backend.runtime.validation import as_bool, as_int

DECODER_ROLE = "decoder"
ENCODER_ROLE = "embedder"  # the sentence embedder that serves zero-shot offline
MAX_ITEMS = 20  # the shipped prompts and texts
DEFAULT_PROMPTS = 4
DEFAULT_TEXTS = 5
DEFAULT_NEW_TOKENS = 32
AGREE_SHORT = 8  # the target: 20/20 on the first 8 tokens
ENCODER_REPEATS = 3


def _say(progress, fraction: float, desc: str) -> None:
    if progress is not None:
        progress(fraction, desc)


def _int8_of(lm, progress, fraction: float) -> tuple:
    """The cached int8 copy of a loaded model (built on first use), and the seconds it took now."""
    _say(progress, fraction, f"Int8 copy of {lm.checkpoint} (quantized on first use only)")
    start = time.perf_counter()
    q, built = quantize.int8_of(lm)
    return q, (time.perf_counter() - start) if built else 0.0


def _describe_int8(lm, q) -> dict:
    d = dict(lm.describe())
    d.update(device="cpu", dtype="int8 (dynamic, per-channel) + fp32",
             note=f"{quantize.count_int8_linears(q)} Linear layers int8 (torch.ao dynamic quantization, per-channel weights, "
                  f"{'8' if quantize.FULL_RANGE else '7'}-bit activations scaled per token group); kept fp32: embeddings, norms"
                  + "".join(f", {n}" for n in q._tlab_int8["kept_fp32"]))
    return d


def _sentences(texts: list[str]) -> list[str]:
    out = []
    for text in texts:
        out += [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.strip()) > 3]
    return out


def _decoder(lm, prompts: int, texts: int, new_tokens: int, progress) -> dict:
    q, built_s = _int8_of(lm, progress, 0.1)
    pair = {"fp32": lm.model, "int8": q}
    _say(progress, 0.25, "Measuring sizes")
    sizes = {name: quantize.sizes(m) for name, m in pair.items()}
    chosen_prompts = measure.load_prompts()[:prompts]

    def step(done, total):
        _say(progress, 0.25 + 0.45 * done / total, f"Greedy runs: prompt {min(done, prompts)} of {prompts}")

    runs = measure.compare_greedy(pair, lm.tokenizer, chosen_prompts, new_tokens, on_step=step)
    ppl = {}
    chosen_texts = measure.load_texts()[:texts]
    for i, (name, m) in enumerate(pair.items()):
        _say(progress, 0.7 + 0.1 * i, f"Perplexity of {name} on {texts} texts")
        ppl[name] = measure.perplexity(m, lm.tokenizer, chosen_texts)
    fp, q8 = runs["fp32"]["outputs"], runs["int8"]["outputs"]
    per_prompt = [
        {"prompt": p, "fp32": lm.tokenizer.decode(a), "int8": lm.tokenizer.decode(b),
         "first_divergence": measure.first_divergence(a, b), "fp32_tokens": len(a), "int8_tokens": len(b)}
        for p, a, b in zip(chosen_prompts, fp, q8)
    ]
    agree = {"first_8": measure.agreement(fp, q8, AGREE_SHORT), f"first_{new_tokens}": measure.agreement(fp, q8, new_tokens),
             "of": len(fp), "new_tokens": new_tokens}
    divergences = [r["first_divergence"] for r in per_prompt if r["first_divergence"] is not None]
    agree["earliest_divergence"] = min(divergences) if divergences else None
    rows = []
    for name in pair:
        rows.append({
            "name": f"{name}",
            "precision": name,
            "disk_mb": round(sizes[name]["disk_mb"], 1),
            "memory_mb": round(sizes[name]["memory_mb"], 1),
            "tokens_per_s": round(measure.median(runs[name]["tokens_per_s"]) or 0.0, 2),
            "tokens_per_s_runs": [round(x, 2) for x in runs[name]["tokens_per_s"]],
            "perplexity": round(ppl[name]["perplexity"], 4) if ppl[name]["perplexity"] else None,
            "perplexity_per_text": [round(x, 3) if x else None for x in ppl[name]["per_text"]],
            "agreement": 1.0 if name == "fp32" else agree[f"first_{new_tokens}"] / max(1, agree["of"]),
        })
    fp_row, q_row = rows
    return {
        "rows": rows,
        "speedup": round(q_row["tokens_per_s"] / fp_row["tokens_per_s"], 3) if fp_row["tokens_per_s"] else None,
        "speedup_evidence": speed_evidence(runs["int8"]["tokens_per_s"], runs["fp32"]["tokens_per_s"], "prompts"),
        "perplexity_ratio": round(q_row["perplexity"] / fp_row["perplexity"], 4) if fp_row["perplexity"] else None,
        "memory_ratio": round(q_row["memory_mb"] / fp_row["memory_mb"], 3),
        "disk_ratio": round(q_row["disk_mb"] / fp_row["disk_mb"], 3),
        "agreement": agree,
        "prompts": per_prompt,
        "perplexity_tokens": ppl["fp32"]["tokens"],
        "int8_built_s": round(built_s, 2),
        "model": lm.describe(),
        "int8_model": _describe_int8(lm, q),
    }


MIN_PAIRS = 5  # fewer paired measurements than this: no speed-up is claimed


def speed_evidence(faster_if_higher: list[float], other: list[float], units: str) -> dict | None:
    """int8's speed-up over fp32 from paired measurements (tok/s of int8 and fp32 per prompt, or seconds of fp32
    and int8 per run): the ratio of medians, its 95% interval (pairs resampled), the decimals it supports, and
    whether stats.claim calls int8 faster (or slower), with the reason."""
    a, b = [x for x in faster_if_higher], [x for x in other]
    if len(a) != len(b) or not a or min(a + b) <= 0:
        return None
    r, lo, hi = stats.paired_ratio(a, b)
    n = len(a)
    claim = stats.claim(stats.Estimate("int8", r, lo, hi, n), stats.Estimate("fp32", 1.0, 1.0, 1.0, n), (r, lo, hi),
                        ratio=True, min_n=MIN_PAIRS, min_change=stats.SPEED_NOISE, units=units, better_word="faster",
                        what="speed-up of int8 over fp32")
    return {"ratio": round(r, 4), "ci95": [round(lo, 4), round(hi, 4)], "decimals": stats.decimals(lo, hi, most=2),
            "n": n, "claim": claim.as_dict()}


def _encoder(lm, texts: int, progress) -> dict:
    from backend.engines.classify.similarity import DEFAULT_TEMPLATE, SENTIMENT_DESCRIPTIONS

    q, built_s = _int8_of(lm, progress, 0.82)
    pair = {"fp32": lm.model, "int8": q}
    _say(progress, 0.83, f"Measuring sizes of {lm.checkpoint}")
    sizes = {name: quantize.sizes(m) for name, m in pair.items()}
    paragraphs = measure.load_texts()[:texts]
    topics = measure.load_topics()  # all 20 topics are candidate labels, whatever the number of texts
    tasks = {
        "sentiment": (_sentences(paragraphs), SENTIMENT_DESCRIPTIONS),
        "topic": (paragraphs, {t: DEFAULT_TEMPLATE.format(t) for t in topics}),
    }
    out_tasks, seconds = {}, {"fp32": [], "int8": []}
    runs, total_runs = 0, len(tasks) * ENCODER_REPEATS * len(pair)
    for task, (items, descriptions) in tasks.items():
        labels, cos = {}, {}
        for r in range(ENCODER_REPEATS):
            for name, m in pair.items():
                budget.check(f"encoder {task} run {r + 1} of {ENCODER_REPEATS}")
                # each run says what it is: the bar must not sit on the quantizing step meanwhile
                _say(progress, 0.84 + 0.15 * runs / total_runs,
                     f"Encoder {task}: {len(items)} texts, {name}, run {r + 1} of {ENCODER_REPEATS}")
                runs += 1
                labels[name], cos[name], s = measure.labels_and_seconds(m, lm.tokenizer, items, descriptions)
                seconds[name].append(s / len(items))
        same = sum(a == b for a, b in zip(labels["fp32"], labels["int8"]))
        out_tasks[task] = {
            "items": len(items), "labels": len(descriptions), "same_label": same,
            "agreement": round(same / len(items), 4),
            "max_abs_cosine_diff": round(float(np.abs(cos["fp32"] - cos["int8"]).max()), 5),
            "changed": [{"text": t, "fp32": a, "int8": b} for t, a, b in zip(items, labels["fp32"], labels["int8"]) if a != b][:10],
        }
    total = sum(t["items"] for t in out_tasks.values())
    agreed = sum(t["same_label"] for t in out_tasks.values())
    rows = [{
        "name": name, "precision": name,
        "disk_mb": round(sizes[name]["disk_mb"], 1), "memory_mb": round(sizes[name]["memory_mb"], 1),
        "ms_per_text": round(1000 * measure.median(seconds[name]), 3),
        "agreement": 1.0 if name == "fp32" else round(agreed / total, 4),
    } for name in pair]
    return {
        "rows": rows,
        "speedup": round(rows[0]["ms_per_text"] / rows[1]["ms_per_text"], 3) if rows[1]["ms_per_text"] else None,
        "speedup_evidence": speed_evidence(seconds["fp32"], seconds["int8"], "interleaved runs"),
        "memory_ratio": round(rows[1]["memory_mb"] / rows[0]["memory_mb"], 3),
        "tasks": out_tasks,
        "int8_built_s": round(built_s, 2),
        "model": lm.describe(),
        "int8_model": _describe_int8(lm, q),
    }


@gpu_task(duration=240)
def efficiency(prompts=DEFAULT_PROMPTS, texts=DEFAULT_TEXTS, new_tokens=DEFAULT_NEW_TOKENS, encoder=True,
               progress=None) -> dict:
    """`/efficiency`: fp32 vs int8 for the decoder (and the encoder when `encoder`).

    `prompts` and `texts` (1-20) choose how many of the shipped prompts / texts to use: fewer
    for an interactive run, 20 for the full comparison. Returns {"decoder": {...},
    "encoder": {...} or None, "settings", "model"}; see the module docstring.
    """
    prompts = as_int("prompts", prompts, lo=1, hi=MAX_ITEMS)
    texts = as_int("texts", texts, lo=1, hi=MAX_ITEMS)
    new_tokens = as_int("new_tokens", new_tokens, lo=AGREE_SHORT, hi=64)
    encoder = as_bool("encoder", encoder)
    start = time.perf_counter()
    with budget.scope():
        dec_lm = hub.load(DECODER_ROLE, progress=progress)
        enc_lm = hub.load(ENCODER_ROLE, progress=progress) if encoder else None
        dec = _decoder(dec_lm, prompts, texts, new_tokens, progress)
        enc = _encoder(enc_lm, texts, progress) if encoder else None
    _say(progress, 1.0, "Done")
    return {
        "decoder": dec,
        "encoder": enc,
        "settings": {"prompts": prompts, "texts": texts, "new_tokens": new_tokens, "encoder": encoder,
                     "perplexity_max_tokens": measure.PERPLEXITY_MAX_TOKENS},
        "seconds": round(time.perf_counter() - start, 2),
        "model": dec["model"],
    }
