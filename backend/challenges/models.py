"""The model work the checks do, through the hub and the engines (never another tab's package): the
sentiment classifier, embeddings, tokenizers, the encoder's attention, the decoder's generation and its
next-token distribution, zero-shot by similarity, the QA reader. Each returns plain data; the checks call
them inside the one gpu_task of a check (registry.check)."""

from __future__ import annotations

import numpy as np

from backend import hub
from backend.runtime import config
from backend.runtime.errors import InputError


def _load(role: str):
    return hub.load(role)


def sentiment(texts: list[str], model=None) -> list[dict]:
    """[{label, score, scores: {label: score}}] from the profile's sentiment model (as /classify serves it), or
    from `model` (its int8 copy) with the profile model's tokenizer."""
    import torch

    from backend.engines.classify import similarity as sim

    lm = _load("sentiment")
    if lm.method == config.METHOD_EMBEDDING:
        ranked = sim.classify_by_similarity(lm.model, lm.tokenizer, texts, dict(sim.SENTIMENT_DESCRIPTIONS))
        return [{"label": r["labels"][0], "score": round(r["scores"][0], 4),
                 "scores": {k: round(v, 4) for k, v in zip(r["labels"], r["scores"])}} for r in ranked]
    if lm.method not in (config.METHOD_MODEL, config.METHOD_FINETUNED):
        raise InputError(f"This challenge needs a sentiment classifier; this server serves sentiment by "
                         f"'{lm.method}'.")
    from backend.engines.tasks.text import forward_inputs

    model = lm.model if model is None else model
    id2label = lm.model.config.id2label
    enc = lm.tokenizer(list(texts), padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.inference_mode():
        probs = model(**forward_inputs(model, enc)).logits.float().softmax(-1).cpu().numpy()
    out = []
    for p in probs:
        labels = [str(id2label.get(i, id2label.get(str(i), i))) for i in range(len(p))]
        best = int(np.argmax(p))
        out.append({"label": labels[best], "score": round(float(p[best]), 4),
                    "scores": {lab: round(float(x), 4) for lab, x in zip(labels, p)}})
    return out


def sentiment_model():
    """The loaded sentiment model (for its int8 copy)."""
    return _load("sentiment")


def embed(texts: list[str], role: str = "embedder") -> np.ndarray:
    """L2-normalised sentence embeddings (cosine = dot) from `role`'s model."""
    from backend.engines.embedding.vectors import embed_texts

    lm = _load(role)
    return embed_texts(list(texts), lm.model, lm.tokenizer)


def pieces(role: str, text: str) -> tuple[list[str], list[int], str]:
    """(tokens, ids, the ids decoded back) of `role`'s tokenizer, no special tokens."""
    tok, _ = hub.tokenizer(role)
    ids = tok(text, add_special_tokens=False)["input_ids"]  # the hub's tokenizer lock makes this thread-safe
    return tok.convert_ids_to_tokens(ids), ids, tok.decode(ids, clean_up_tokenization_spaces=False)


def unk_token(role: str) -> str | None:
    tok, _ = hub.tokenizer(role)
    return tok.unk_token


def attention(text: str):
    """The encoder's attention on `text`: engines.attention's AttentionResult (layers, heads, T, T)."""
    from backend.engines.attention.extract import compute_attention

    lm = _load("encoder")
    return compute_attention(lm.model, lm.tokenizer, text)


def decode(prompt: str, int8: bool = False, **settings) -> dict:
    """One generation by the decoder (engines.generation.decode) as its /decode payload; `int8`: by its cached
    int8 copy (dynamic quantization, shared with the Efficiency and Decoding tabs)."""
    from backend.engines.generation.generate import decode as run

    lm = _load("decoder")
    model = lm.model
    if int8:
        from backend.engines.compression.quantize import int8_of

        model, _ = int8_of(lm)
    return run(model, lm.tokenizer, prompt, {"top_n": 5, **settings}).to_dict()


def decoder_tokens(ids: list[int]) -> list[str]:
    tok, _ = hub.tokenizer("decoder")
    return [tok.decode([i]) for i in ids]


def zero_shot(text: str, labels: list[str], template: str) -> list[tuple[str, float]]:
    """[(label, score)] best first, as /zero_shot scores them with the profile's zero-shot model."""
    lm = _load("zero_shot")
    if lm.method == config.METHOD_EMBEDDING:
        from backend.engines.classify import similarity as sim

        r = sim.classify_by_similarity(lm.model, lm.tokenizer, [text], {lab: template.replace("{}", lab)
                                                                         for lab in labels})[0]
        return [(lab, round(s, 4)) for lab, s in zip(r["labels"], r["scores"])]
    from transformers import pipeline

    pipe = pipeline("zero-shot-classification", model=lm.model, tokenizer=lm.tokenizer,
                    device=next(lm.model.parameters()).device)
    r = pipe(text, candidate_labels=labels, hypothesis_template=template)
    return [(lab, round(float(s), 4)) for lab, s in zip(r["labels"], r["scores"])]


def reader(question: str, context: str) -> dict:
    """The QA reader's answer and its no-answer decision (the reader trained here, or a QA checkpoint)."""
    lm = _load("qa")
    if lm.method == config.METHOD_FINETUNED:
        from backend.engines.qa import reader as qa_reader

        r = qa_reader.answer(lm.model, lm.tokenizer, question, context, top_n=1)
        best = r["answers"][0]["answer"] if r["answers"] else ""
        return {"answer": "" if r["no_answer"] else best, "no_answer": bool(r["no_answer"]),
                "best_span": best, "margin": r["margin"], "threshold": r["threshold"], "model": lm.checkpoint}
    if lm.method == config.METHOD_MODEL:
        from backend.engines.qa.extractive_qa import answer_question

        r = answer_question(lm.model, lm.tokenizer, question, context, top_n=1)
        best = r["answers"][0] if r["answers"] else {"answer": "", "score": 0.0}
        return {"answer": best["answer"], "no_answer": not best["answer"], "best_span": best["answer"],
                "score": best.get("score"), "model": lm.checkpoint}
    raise InputError(f"This challenge needs an extractive QA reader; this server answers questions by "
                     f"'{lm.method}'.")


def entities(text: str) -> list[dict]:
    """[{label, text, start, end, score}] from the profile's NER model (a token classifier, words grouped as
    the pipeline's "simple" aggregation groups them); the span is the text as written."""
    import logging

    from transformers import pipeline

    lm = _load("ner")
    if lm.method not in (config.METHOD_MODEL, config.METHOD_FINETUNED):
        raise InputError(f"This challenge needs a token classifier for NER; this server tags entities by "
                         f"'{lm.method}'.")
    # the NER model trained here is not a class the pipeline lists, so it logs an ERROR, then runs it correctly
    log = logging.getLogger("transformers.pipelines.base")
    level = log.level
    if lm.method == config.METHOD_FINETUNED:
        log.setLevel(logging.CRITICAL)
    try:
        tagger = pipeline("token-classification", model=lm.model, tokenizer=lm.tokenizer, aggregation_strategy="simple",
                          device=next(lm.model.parameters()).device)
    finally:
        log.setLevel(level)
    return [{"label": e["entity_group"], "text": text[int(e["start"]):int(e["end"])], "start": int(e["start"]),
             "end": int(e["end"]), "score": round(float(e["score"]), 4)} for e in tagger(text)]
