"""/ner with chapter 4's model (the Pipelines model box says "multilingual" or "multilingual-de"): German,
French, Italian or English text tagged by the packaged multilingual encoder fine-tuned for NER here, on
all four languages or on German only (the Multilingual tab's default run, built at set-up), in the
token-classification pipeline's result shape: entities with character offsets and scores. The model is
the one the Multilingual tab tags with (`hub.multilingual_runs`), never a second copy."""

from __future__ import annotations

import time

from backend.engines.ner import languages as ner_languages, transfer as ner_transfer
from backend.hub import multilingual_runs
from backend.runtime import budget, config
from backend.runtime.errors import InputError

NAMES = {"multilingual": "all", "multilingual-de": "de"}  # the model box's names -> the run
MAX_WORDS = 60  # its training sentences are short: 96 tokens hold about 60 words of them


def _check_lengths(texts: list[str]) -> None:
    for i, t in enumerate(texts):
        n = len(ner_transfer.split_words(t))
        if n > MAX_WORDS:
            where = "The text" if len(texts) == 1 else f"Text {i + 1}"
            raise InputError(f"{where} has {n} words; chapter 4's model tags at most {MAX_WORDS} words a text "
                             "(it was trained on sentences): split it into sentences, one per line, with Batch "
                             "mode on.")


# What this model does is the pipeline's "first": a word takes its first piece's tag (its training labelled
# first pieces only), B-/I- words group into entities, an entity's score is the mean of its words'.
AGGREGATION = "first"


def tag(base, texts: list[str], run: str, aggregation: str = AGGREGATION) -> dict:
    """The /ner result for `texts` tagged by run `run`'s model over the loaded multilingual encoder `base`.
    `aggregation`: what the learner asked for; this model always aggregates as "first" and says so."""
    multilingual_runs.check_base(base)
    _check_lengths(texts)
    labels = ner_languages.labels()
    model = multilingual_runs.run_model(run, base, labels)
    trained_on = multilingual_runs.RUN_NAMES[run]
    t0 = time.perf_counter()
    with budget.scope():
        entities = ner_transfer.tag_texts(model, base.tokenizer, texts, labels)
    described = {**base.describe(), "role": "ner", "method": config.METHOD_FINETUNED,
                 "fine_tuned": f"chapter 4's default run, trained on {trained_on} (PER, ORG, LOC)"}
    notices = [] if aggregation == AGGREGATION else [
        f"Aggregation '{aggregation}' was not applied: chapter 4's model tags each word by its first piece and "
        "groups the words into entities, which is the pipeline's 'first' (a word's other pieces were never "
        "trained to carry a tag, so 'none', 'average' or 'max' over them would read untrained outputs)."]
    return {"task": "ner", "model": described, "method": config.METHOD_FINETUNED, "aggregation": AGGREGATION,
            "notices": notices + [f"Chapter 4's model: {base.checkpoint} fine-tuned for NER here on {trained_on} (the "
                        "Multilingual tab's default run); it splits the text into words as its training set does "
                        "and tags each word, so entities start and end on word boundaries."],
            "scoring": "an entity's score is the mean softmax probability of its words' tags",
            "results": [{"text": t, "entities": e} for t, e in zip(texts, entities)],
            "seconds": round(time.perf_counter() - t0, 4)}
