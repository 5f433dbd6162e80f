"""Models the project builds itself, once, into the cache: the builder table the loader reads.

The offline `sentiment` role: MiniLM fine-tuned on the shipped sentiment set, once, by its recipe
(backend/engines/classify/sentiment_recipe.py: the training; here: the cache and the serving).
It is trained on first use, or by `python -m backend.hub pull --profile local`, and cached (the one
builder shape, cache_build.py: `conversion.write_once`, temp folder, rename) under
`<cache>/trained/<RECIPE>-<key>` in the Train tab's Download layout (`finetune.save_folder`).
The key covers the data, the base encoder's weights and this recipe, so a change retrains.
`Served` wraps it like any sequence classifier: `model(**enc).logits`, `config.id2label`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from torch import nn

from backend.engines.classify import datasets
from backend.engines.classify import finetune
from backend.engines.classify.sentiment_recipe import (  # noqa: F401  (the recipe's names, read here too)
    CLASSIFIER, DATASET, RECIPE, RECIPE_BUDGET, train)
from backend.engines.embedding.vectors import DEFAULT_MAX_LENGTH
from backend.hub.cache_build import CacheBuild
from backend.hub.conversion import META_FILE  # noqa: F401  (tests read it here)

BUILD = CacheBuild(RECIPE, lambda: [datasets.DATA_DIR / DATASET / f"{split}.jsonl" for split in datasets.SPLITS],
                   code=(__name__,))
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet


def _saved(tmp: Path, base, weights: dict, meta: dict) -> dict:
    finetune.save_folder(tmp, base.model, weights, base.tokenizer, meta["labels"])
    return meta


def ensure(base, location: str | Path, root: Path | None = None,
           progress: Callable[[float, str], None] | None = None) -> tuple[Path, dict]:
    """The cached classifier's folder for `base` (read from `location`), trained now if need be."""
    return BUILD.ensure_model(location, root, lambda tmp: _saved(tmp, base, *train(base, progress)))


class Served(nn.Module):
    """The fine-tuned classifier as the Pipelines' sequence-classification runner expects it."""

    def __init__(self, classifier: finetune.EncoderClassifier, labels: list[str]):
        super().__init__()
        self.classifier = classifier
        cfg = copy.deepcopy(classifier.encoder.config)
        cfg.id2label = dict(enumerate(labels))
        cfg.label2id = {l: i for i, l in enumerate(labels)}
        cfg.architectures = ["MeanPoolForSequenceClassification"]
        cfg.max_position_embeddings = min(DEFAULT_MAX_LENGTH, cfg.max_position_embeddings)  # the embedder's reach
        self.config = cfg

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, **_):
        if attention_mask is None:
            attention_mask = input_ids.new_ones(input_ids.shape)
        logits, _ = self.classifier(input_ids, attention_mask, token_type_ids)
        return _Output(logits)


class _Output:
    def __init__(self, logits):
        self.logits = logits


def serving_model(base, location: str | Path, device: str, dtype, root: Path | None = None,
                  progress: Callable[[float, str], None] | None = None) -> tuple[Served, object, dict, Path]:
    """(classifier, tokenizer, meta, folder) for the offline sentiment role, trained once from `base`."""
    folder, meta = ensure(base, location, root, progress)
    classifier, tokenizer, labels = finetune.load_folder(folder, device, dtype)
    return Served(classifier, labels).eval(), tokenizer, meta, folder


@dataclass(frozen=True)
class Builder:
    """How the loader makes a role's model that the project trains itself: from which role's
    model (handed in, so a builder never asks the hub), and which facts describe the result."""

    base_role: str
    build: Callable  # (base LoadedModel, base location, device, dtype, progress=) -> (model, tokenizer, meta, folder)
    describe_keys: tuple[str, ...]
    cache_dir: Callable  # (base location) -> the folder the built model lives in (built or not yet)
    what: str  # what is built, in words: "the offline classifier"


BUILDERS = {
    "sentiment": Builder("embedder", serving_model, ("classifier", "trained_on", "test_accuracy", "test_macro_f1",
                                                     "labels", "epochs", "steps"), cache_dir, "the offline classifier"),
}


def _ner_builder() -> Builder:
    from backend.hub import ner_builder  # the NER recipe (imports engines only)

    return Builder("embedder", ner_builder.serving_model,
                   ("classifier", "trained_on", "test_f1", "test_f1_per_type", "labels", "epochs", "steps"),
                   ner_builder.cache_dir, "the offline NER model")


BUILDERS["ner"] = _ner_builder()


def _reader_builder() -> Builder:
    from backend.hub import reader_builder  # the chapter 7 reader (imports engines only)

    return Builder("embedder", reader_builder.serving_model,
                   ("classifier", "trained_on", "validation_exact", "validation_f1", "null_threshold", "epochs",
                    "steps"), reader_builder.cache_dir, "the offline QA reader")


BUILDERS["qa"] = _reader_builder()
