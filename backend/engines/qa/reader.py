"""The reader of chapter 7: an encoder with a span head, fine-tuned SQuAD 2.0 style, and its decoding.

Model: the encoder's weights under `AutoModelForQuestionAnswering` (for all-MiniLM-L6-v2 a
`BertForQuestionAnswering`): one linear layer gives every token a start and an end logit; the
head is new, initialised from a fixed seed.

Training (`train`): question and context are tokenised as a pair; a context longer than the
window is cut into overlapping windows (`stride`). A window's label is the answer's first and
last token, or the [CLS] token (position 0) when the question has no answer or the answer is not
inside this window. The loss is the model's own: cross-entropy of the start and of the end.

Decoding (`answer`), as the book's post-processing: in each window the `n_best` start and end
logits over *context* tokens are paired (start <= end, at most `max_answer_tokens` tokens); a
span scores start_logit + end_logit, and a span seen in two windows keeps its best score. The
[CLS] pair (start_logit[0] + end_logit[0], the smallest over windows) is the "no answer"
prediction, scored on the same scale: it wins when best span - null <= `threshold` (chosen on the
validation split when the model is built). Every answer is context[start:end] through the
tokenizer's offsets.
"""

from __future__ import annotations

import copy
import math
import random
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
import torch

from backend.engines.qa import squad_metrics
from backend.engines.qa.data import Example
from backend.engines.tasks.text import device_of, forward_inputs, model_max_length
from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text


@dataclass(frozen=True)
class Recipe:
    epochs: int = 4
    batch_size: int = 16
    learning_rate: float = 1.5e-4
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 256  # training windows (the shipped contexts fit in one)
    stride: int = 64
    seed: int = 0
    freeze_word_embeddings: bool = True  # 11.7M of the encoder's 22.7M weights: kept as they are (a small set)


N_BEST = 20
MAX_ANSWER_TOKENS = 30
MAX_LENGTH = 384  # serving windows
STRIDE = 128
WINDOW_BATCH = 8


def new_model(encoder, seed: int = 0):
    """A span-head model holding a copy of `encoder`'s weights (the encoder itself is left as it is)."""
    from transformers import AutoModelForQuestionAnswering

    torch.manual_seed(seed)
    cfg = copy.deepcopy(encoder.config)
    cfg.architectures = None
    model = AutoModelForQuestionAnswering.from_config(cfg)
    body = getattr(model, model.base_model_prefix)
    missing, _ = body.load_state_dict(encoder.state_dict(), strict=False)
    if missing:
        raise RuntimeError(f"the encoder's weights do not fill the span model: missing {missing[:3]}")
    return model.to(device_of(encoder)).float()


# ------------------------------------------------------------------------------ training

def features(tokenizer, examples: list[Example], max_length: int, stride: int) -> list[dict]:
    """One training row per window: ids, and the answer's token span or (0, 0) for [CLS]."""
    enc = tokenizer([e.question for e in examples], [e.context for e in examples], truncation="only_second",
                    max_length=max_length, stride=stride, return_overflowing_tokens=True,
                    return_offsets_mapping=True)
    rows = []
    for i, offsets in enumerate(enc["offset_mapping"]):
        ex = examples[enc["overflow_to_sample_mapping"][i]]
        seq = enc.sequence_ids(i)
        start = end = 0
        if ex.answerable:
            c0, c1 = ex.starts[0], ex.starts[0] + len(ex.answers[0])
            ctx = [t for t, s in enumerate(seq) if s == 1]
            if ctx and offsets[ctx[0]][0] <= c0 and offsets[ctx[-1]][1] >= c1:
                start = next(t for t in ctx if offsets[t][1] > c0)
                end = next(t for t in reversed(ctx) if offsets[t][0] < c1)
        row = {k: enc[k][i] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        rows.append({**row, "start_positions": start, "end_positions": end})
    return rows


def _batch(tokenizer, rows: list[dict], device) -> dict:
    keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in rows[0]]
    padded = tokenizer.pad([{k: r[k] for k in keys} for r in rows], return_tensors="pt")
    out = {k: v.to(device) for k, v in padded.items()}
    for k in ("start_positions", "end_positions"):
        out[k] = torch.tensor([r[k] for r in rows], device=device)
    return out


def train(model, tokenizer, examples: list[Example], recipe: Recipe = Recipe(),
          progress: Callable[[int, int, float], None] | None = None) -> dict:
    """Fine-tune `model` in place for recipe.epochs over the windows of `examples` (a fixed amount of work)."""
    rows = features(tokenizer, examples, recipe.max_length, recipe.stride)
    per_epoch = math.ceil(len(rows) / recipe.batch_size)
    total = per_epoch * recipe.epochs
    if recipe.freeze_word_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in params if p.ndim > 1 and "LayerNorm" not in n]
    other = [p for n, p in params if not (p.ndim > 1 and "LayerNorm" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                             {"params": other, "weight_decay": 0.0}], lr=recipe.learning_rate)
    warm = max(1, int(recipe.warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    rng = random.Random(recipe.seed)
    torch.manual_seed(recipe.seed)
    device = device_of(model)
    model.train()
    step, losses, t0 = 0, [], time.perf_counter()
    for _ in range(recipe.epochs):
        order = list(range(len(rows)))
        rng.shuffle(order)
        for lo in range(0, len(order), recipe.batch_size):
            batch = _batch(tokenizer, [rows[j] for j in order[lo:lo + recipe.batch_size]], device)
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            losses.append(loss.item())
            if progress is not None:
                progress(step, total, losses[-1])
    model.eval()
    return {"steps": step, "total_steps": total, "windows": len(rows), "final_loss": round(float(np.mean(losses[-per_epoch:])), 4),
            "train_loop_s": round(time.perf_counter() - t0, 2), "recipe": asdict(recipe)}


# ------------------------------------------------------------------------------ decoding

def _logits(model, enc, n_windows: int) -> tuple[np.ndarray, np.ndarray]:
    inputs = forward_inputs(model, enc)
    starts, ends = [], []
    with torch.inference_mode():
        for lo in range(0, n_windows, WINDOW_BATCH):
            budget.check(f"read {lo} of {n_windows} windows of the context", "Ask about a shorter context.")
            out = model(**{k: v[lo:lo + WINDOW_BATCH] for k, v in inputs.items()})
            starts.append(out.start_logits.float().cpu().numpy())
            ends.append(out.end_logits.float().cpu().numpy())
    return np.concatenate(starts), np.concatenate(ends)


def _window_spans(s: np.ndarray, e: np.ndarray, ctx: np.ndarray, n_best: int, max_tokens: int):
    """(start token, end token, start+end logit) for the n-best starts x n-best ends among context tokens."""
    top_s = ctx[np.argsort(-s[ctx], kind="stable")[:n_best]]
    top_e = ctx[np.argsort(-e[ctx], kind="stable")[:n_best]]
    return [(int(a), int(b), float(s[a] + e[b])) for a in top_s for b in top_e if a <= b < a + max_tokens]


def answer(model, tokenizer, question: str, context: str, top_n: int = 3, threshold: float | None = None,
           n_best: int = N_BEST, max_answer_tokens: int = MAX_ANSWER_TOKENS, max_length: int = MAX_LENGTH,
           stride: int = STRIDE) -> dict:
    """The best spans of `context` for `question` and the [CLS] no-answer decision.

    -> {"answers": [{answer, score, start, end, logit, window}], "no_answer", "null_logit", "best_logit",
        "margin" (best span - null), "threshold", "windows", "max_length", "stride"}; `score` is a span's
        softmax share among the n-best spans and the null prediction, as the QA pipeline reports it."""
    return answer_many(model, tokenizer, question, [context], top_n, threshold, n_best, max_answer_tokens,
                       max_length, stride)[0]


def answer_many(model, tokenizer, question: str, contexts: list[str], top_n: int = 3, threshold: float | None = None,
                n_best: int = N_BEST, max_answer_tokens: int = MAX_ANSWER_TOKENS, max_length: int = MAX_LENGTH,
                stride: int = STRIDE) -> list[dict]:
    """`answer` for each of several contexts (a retriever's passages), their windows read in shared forwards
    (WINDOW_BATCH at a time) instead of one forward per passage; each result is what `answer` gives alone."""
    question = check_text(question, "question")
    contexts = [check_text(c, "context") for c in contexts]
    if threshold is None:
        threshold = float(getattr(model.config, "null_threshold", 0.0))
    limit = min(max_length, model_max_length(model, tokenizer))
    q_tokens = len(tokenizer(question, add_special_tokens=False)["input_ids"])
    if q_tokens > limit // 2:
        raise InputError(f"The question is {q_tokens} tokens long; keep it under {limit // 2} tokens.")
    stride = max(0, min(stride, (limit - q_tokens - 4) // 2))
    enc = tokenizer([question] * len(contexts), contexts, truncation="only_second", max_length=limit, stride=stride,
                    return_overflowing_tokens=True, return_offsets_mapping=True, padding=True, return_tensors="pt")
    n = enc["input_ids"].shape[0]
    start_logits, end_logits = _logits(model, enc, n)
    offsets = enc["offset_mapping"].cpu().numpy()
    owner = enc["overflow_to_sample_mapping"].cpu().numpy()
    out = []
    for i, context in enumerate(contexts):
        mine = [w for w in range(n) if owner[w] == i]
        null, spans = math.inf, {}
        for local, w in enumerate(mine):
            ctx = np.array([t for t, sid in enumerate(enc.sequence_ids(w)) if sid == 1], dtype=np.int64)
            null = min(null, float(start_logits[w][0] + end_logits[w][0]))
            if ctx.size == 0:
                continue
            for a, b, logit in _window_spans(start_logits[w], end_logits[w], ctx, n_best, max_answer_tokens):
                c0, c1 = int(offsets[w][a][0]), int(offsets[w][b][1])
                if c1 > c0 and ((c0, c1) not in spans or spans[(c0, c1)][0] < logit):
                    spans[(c0, c1)] = (logit, local)
        out.append(_decided(question, context, spans, null, threshold, top_n, len(mine), limit, stride))
    return out


def _decided(question: str, context: str, spans: dict, null: float, threshold: float, top_n: int, windows: int,
             limit: int, stride: int) -> dict:
    """One context's spans ({(c0, c1): (logit, window)}) and null logit -> `answer`'s result."""
    ranked = sorted(spans.items(), key=lambda kv: -kv[1][0])
    logits = np.array([v[0] for _, v in ranked] + [null])
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    scored = [{"answer": context[c0:c1], "score": float(p), "start": c0, "end": c1, "logit": round(v[0], 4),
               "window": v[1]} for ((c0, c1), v), p in zip(ranked, probs)]
    answers, set_aside = _of_the_asked_kind(question, context, scored, null, threshold)
    best = answers[0]["logit"] if answers else -math.inf
    margin = best - null
    return {"answers": answers[:top_n], "no_answer": not answers or margin <= threshold, "null_logit": round(null, 4),
            "null_score": float(probs[-1]), "best_logit": round(best, 4) if answers else None,
            "margin": round(margin, 4) if answers else None, "threshold": threshold, "windows": int(windows),
            "max_length": int(limit), "stride": int(stride), "set_aside": set_aside}


def _of_the_asked_kind(question: str, context: str, scored: list[dict], null: float, threshold: float):
    """(the spans in rank order without those set aside, the set-aside ones with their reason). Among the
    spans that beat "no answer", one that is not the kind of thing asked (`answer_type.mismatch`) is set
    aside with every span overlapping it (its fragments: "about" of "about 200"), and the next one is
    considered; spans below the threshold are kept as they are (they only explain a refusal)."""
    from backend.engines.qa import answer_type

    kept, set_aside = [], []
    for a in scored:
        if any(a["start"] < r["end"] and r["start"] < a["end"] for r in set_aside):
            continue
        why = answer_type.mismatch(question, context, a["start"], a["end"]) if a["logit"] - null > threshold else None
        if why:
            set_aside.append({**a, "reason": why})
        else:
            kept.append(a)
    return kept, set_aside


def best_threshold(margins: list[float], answerable: list[bool], right: list[float]) -> float:
    """The margin threshold that maximises total F1 on a labelled set (the SQuAD 2.0 script's best_f1_thresh):
    below it "no answer" (1 on unanswerable, 0 on answerable), above it the span's F1 (`right`)."""
    cands = sorted(set(round(m, 4) for m in margins if math.isfinite(m)))
    best_t, best = 0.0, -1.0
    for t in [min(cands, default=0.0) - 1.0] + cands:
        total = sum((f if m > t else 0.0) if a else (0.0 if m > t else 1.0)
                    for m, a, f in zip(margins, answerable, right))
        if total > best + 1e-9:
            best_t, best = t, total
    return float(best_t)


def evaluate(model, tokenizer, examples: list[Example], threshold: float | None = None) -> dict:
    """SQuAD 2.0 metrics on `examples`, the margins, and the threshold that would have been best."""
    outs = [answer(model, tokenizer, e.question, e.context, top_n=1, threshold=threshold) for e in examples]
    preds = ["" if o["no_answer"] else o["answers"][0]["answer"] for o in outs]
    metrics = squad_metrics.evaluate([list(e.answers) for e in examples], preds)
    margins = [o["margin"] if o["margin"] is not None else -math.inf for o in outs]
    span_f1 = [squad_metrics.score(list(e.answers), o["answers"][0]["answer"])[1] if o["answers"] else 0.0
               for e, o in zip(examples, outs)]
    return {"metrics": metrics, "predictions": preds, "margins": margins,
            "best_threshold": best_threshold(margins, [e.answerable for e in examples], span_f1)}


def read_passages(model, tokenizer, question: str, texts: list[str], read: Callable[[str, str], dict] | None = None,
                  rank_penalty: float | None = None, depth: int | None = None) -> tuple[dict | None, list[dict]]:
    """Chapter 7's retriever-reader rule: the reader reads each passage on its own; the answer is the
    best-scoring span among the passages where it does not choose "no answer", a span scoring its start +
    end logit less `rank_penalty` for each place its passage is below the retriever's first (the retriever's
    order as a prior: a reader alone finds confident spans in near-miss passages). `texts` are in the
    retriever's order; `rank_penalty` None: the model's config's (chosen on validation; 0 where none was).
    Only the first `depth` passages are read (None: the config's `read_depth`, chosen on validation; all
    where none was): a reader that reads more passages also has more chances to be fooled by a near miss.

    -> (the winning row or None (no answer), a row per passage: {passage (1-based), answer, start, end, logit,
    margin, no_answer, threshold}). `read(question, text)`: this module's `answer(..., top_n=1)` for one
    passage (an evaluation passes a memo, so a passage read for the top 3 is not read again for the top 5)."""
    if depth is None:
        depth = getattr(model.config, "read_depth", None)
    texts = list(texts)[:depth] if depth else list(texts)
    outs = (answer_many(model, tokenizer, question, texts, top_n=1) if read is None
            else [read(question, text) for text in texts])
    rows = []
    for i, (text, out) in enumerate(zip(texts, outs), start=1):
        best = out["answers"][0] if out["answers"] else None
        rows.append({"passage": i, "answer": best["answer"] if best else "", "start": best["start"] if best else None,
                     "end": best["end"] if best else None, "logit": best["logit"] if best else None,
                     "margin": out["margin"], "no_answer": out["no_answer"], "threshold": out.get("threshold")})
    if rank_penalty is None:
        rank_penalty = float(getattr(model.config, "rank_penalty", 0.0))
    kept = [r for r in rows if not r["no_answer"] and r["logit"] is not None]
    return (max(kept, key=lambda r: r["logit"] - rank_penalty * (r["passage"] - 1)) if kept else None), rows
