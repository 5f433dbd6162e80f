"""Tasks served by a dedicated encoder checkpoint: classification, NER, fill-mask, NLI zero-shot.

Sequence classification and fill-mask are a forward pass and a softmax, done here directly
(batched, sorted by length, truncation reported). NER and NLI zero-shot go through
transformers' own `pipeline()` (still in transformers 5), which owns the subtle parts:
sub-word aggregation strategies and stride windows for NER, premise/hypothesis pairing for
zero-shot.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from backend.engines.embedding import batching
from backend.runtime.config import get_settings
from backend.runtime.errors import InputError
from backend.engines.tasks.text import forward_inputs, model_max_length, ranked_labels, truncation_notice, window_stride
from backend.runtime.validation import as_int

MASK_PLACEHOLDER = "[MASK]"
AGGREGATIONS = ("none", "simple", "first", "average", "max")
MAX_TOP_K = 50  # fill-mask candidates


def _labels(model) -> list[str]:
    id2label = getattr(model.config, "id2label", None) or {}
    n = int(getattr(model.config, "num_labels", len(id2label)) or len(id2label))
    return [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(n)]


def classify_sequences(model, tokenizer, texts: list[str], batch_size: int = 32) -> tuple[list[dict], list[str]]:
    """Label scores for each text -> ([{sequence, labels, scores}], notices).

    Softmax over the labels (sigmoid per label for multi-label checkpoints), in float32.
    """
    labels = _labels(model)
    multi = getattr(model.config, "problem_type", None) == "multi_label_classification"
    limit = model_max_length(model, tokenizer)
    lengths = [len(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"]]
    notices = [
        truncation_notice(n, limit, f"text on line {i + 1}") for i, n in enumerate(lengths) if n > limit
    ]
    if len(texts) <= batching.SMALL_REQUEST and batching.enabled():  # shares a forward with concurrent requests
        def make_run(m):
            return lambda batch: _label_probs(m, tokenizer, batch, limit, multi, max(batch_size, len(batch)))

        probs = batching.coalescer_for(model, ("classify", id(tokenizer), limit, multi), make_run,
                                       get_settings().batch_max).submit(list(texts))
    else:
        probs = _label_probs(model, tokenizer, list(texts), limit, multi, batch_size)
    return [ranked_labels(text, labels, probs[i]) for i, text in enumerate(texts)], notices


def _label_probs(model, tokenizer, texts: list[str], limit: int, multi: bool, batch_size: int) -> np.ndarray:
    """(texts, labels) probabilities, in batches sorted by length so that padding is small."""
    lengths = [len(t) for t in texts]
    order = np.argsort([-n for n in lengths], kind="stable")
    probs = np.zeros((len(texts), len(_labels(model))), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            enc = tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=limit,
                            return_tensors="pt")
            logits = model(**forward_inputs(model, enc)).logits.float()
            p = torch.sigmoid(logits) if multi else logits.softmax(-1)
            probs[idx] = p.cpu().numpy()
    return probs


def _plain(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value


def ner_with_pipeline(model, tokenizer, texts: list[str], aggregation: str = "simple",
                      batch_size: int = 32) -> tuple[list[list[dict]], list[str]]:
    """Entities per text through transformers' token-classification pipeline.

    Long texts: with an aggregation strategy, the pipeline's stride windows cover all of the
    text; with "none" the text is truncated and a notice says so.
    """
    from transformers import pipeline

    aggregation = (aggregation or "simple").lower()
    if aggregation not in AGGREGATIONS:
        raise InputError(f"Unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}.")
    limit = model_max_length(model, tokenizer)
    lengths = [len(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"]]
    long = [i for i, n in enumerate(lengths) if n > limit]
    notices, kwargs = [], {}
    if long and aggregation != "none":
        kwargs["stride"] = window_stride(limit)
        notices.append(
            f"{len(long)} text(s) longer than the model's {limit} tokens: read in overlapping windows "
            f"(stride {kwargs['stride']})."
        )
    elif long:
        notices += [truncation_notice(lengths[i], limit, f"text on line {i + 1}") for i in long]
        kwargs["truncation"] = True
    with _quiet_model_type_check(model):
        ner = pipeline("token-classification", model=model, tokenizer=tokenizer, aggregation_strategy=aggregation,
                       **({"stride": kwargs["stride"]} if "stride" in kwargs else {}))
    if "truncation" in kwargs:
        tokenizer_max = tokenizer.model_max_length
        tokenizer.model_max_length = limit  # the pipeline truncates to the tokenizer's max
    try:
        raw = ner(list(texts), batch_size=batch_size)
    finally:
        if "truncation" in kwargs:
            tokenizer.model_max_length = tokenizer_max
    out = []
    for text, ents in zip(texts, raw):
        rows = []
        for ent in ents:
            row = {k: _plain(v) for k, v in ent.items()}
            row["entity_group"] = row.pop("entity_group", row.pop("entity", None))
            row["score"] = float(row["score"])
            if isinstance(row.get("start"), int) and isinstance(row.get("end"), int):
                row["word"] = text[row["start"]:row["end"]]  # as written: an uncased tokenizer decodes lowercase
            rows.append(row)
        out.append(rows)
    return out, notices


@contextlib.contextmanager
def _quiet_model_type_check(model):
    """The NER model trained here is not a class transformers lists for the task (it adds word
    shapes to a BERT), so the pipeline logs an ERROR that it is "not supported", then runs it
    correctly; that line would read as a failure in the app's log. Only for a model that says
    it was built here (its config names our architecture)."""
    import logging

    ours = any(a.startswith("MiniLMWordShape") for a in getattr(model.config, "architectures", None) or [])
    log = logging.getLogger("transformers.pipelines.base")
    level = log.level
    if ours:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def zero_shot_with_pipeline(model, tokenizer, texts: list[str], labels: list[str], multi_label: bool,
                            template: str) -> list[dict]:
    """NLI zero-shot (e.g. bart-large-mnli) through transformers' pipeline."""
    from transformers import pipeline

    if "{}" not in template:
        raise InputError("The hypothesis template needs a '{}' where the label goes, e.g. 'This text is about {}.'")
    zsc = pipeline("zero-shot-classification", model=model, tokenizer=tokenizer)
    raw = zsc(list(texts), candidate_labels=labels, hypothesis_template=template, multi_label=multi_label)
    if isinstance(raw, dict):
        raw = [raw]
    return [{"sequence": r["sequence"], "labels": list(r["labels"]),
             "scores": [float(s) for s in r["scores"]]} for r in raw]


def fill_mask(model, tokenizer, text: str, top_k: int = 5) -> dict:
    """Top-k tokens for the one `[MASK]` in `text`, with probabilities (softmax in float32)."""
    mask_token = getattr(tokenizer, "mask_token", None)
    if not mask_token:
        raise InputError("This model's tokenizer has no mask token: fill-mask needs a masked language model.")
    count = text.count(MASK_PLACEHOLDER) + (text.count(mask_token) if mask_token != MASK_PLACEHOLDER else 0)
    if count == 0:
        raise InputError(f"The text has no {MASK_PLACEHOLDER}: put {MASK_PLACEHOLDER} where the missing word goes.")
    if count > 1:
        raise InputError(f"The text has {count} {MASK_PLACEHOLDER} tokens; use exactly one.")
    top_k = as_int("top_k", top_k, lo=1, hi=MAX_TOP_K)
    model_text = text.replace(MASK_PLACEHOLDER, mask_token)
    limit = model_max_length(model, tokenizer)
    enc = tokenizer(model_text, return_tensors="pt", truncation=True, max_length=limit)
    positions = (enc["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten()
    if len(positions) != 1:
        raise InputError(
            f"The {MASK_PLACEHOLDER} falls beyond the model's {limit}-token window: move it earlier or shorten the text."
        )
    pos = int(positions[0])
    with torch.inference_mode():
        logits = model(**forward_inputs(model, enc)).logits[0, pos].float()
    probs = logits.softmax(-1)
    top = torch.topk(probs, k=min(top_k, probs.shape[-1]))
    candidates = []
    for p, tid in zip(top.values.tolist(), top.indices.tolist()):
        token_str = tokenizer.decode([tid]).strip()
        candidates.append({
            "token": int(tid),
            "token_str": token_str,
            "score": float(p),
            "sequence": text.replace(MASK_PLACEHOLDER, token_str).replace(mask_token, token_str),
        })
    return {"candidates": candidates, "mask_token": mask_token, "mask_position": pos}
