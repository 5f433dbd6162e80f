"""The offline `ner` role: MiniLM fine-tuned once, here, on the shipped NER set (the book's
chapter 4 method: encoder + dropout + a linear head per token, first sub-word piece labelled).

Under the `local` profile there is no NER checkpoint (none is packaged, and the registries
hold none). all-MiniLM-L6-v2 is uncased, so the capital letters that mark most names never
reach it; the recipe adds a small learned word-shape embedding (lower / Capitalised / ALLCAPS /
digits / punctuation, from the word as written) to each token's input embedding (so every layer
reads capitalisation in context) and beside its hidden state at the head, and serves a tokenizer
that computes those shapes from the text (bench/results/ner.md has the recipes tried).

Like the sentiment builder (`builders.py`): a fixed number of steps, inside
`budget.detached()`, written with `conversion.write_once` under
`<cache>/trained/<RECIPE>-<key>`, the key hashing the data, the base weights and the recipe.
The served model looks like an `AutoModelForTokenClassification` to transformers' pipeline.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from backend.engines.ner import data as ner_data
from backend.engines.ner import token_classification as tc
from backend.engines.ner import serving
from backend.hub.cache_build import CacheBuild
from backend.hub.conversion import META_FILE  # noqa: F401  (tests read it here)
from backend.runtime import budget as request_budget, fixed_work

RECIPE = "ner-shape-v2"  # bump when the recipe changes
# 6 epochs of 50 batches (300 steps, about 2.3 min on 2 quiet cores), word shapes at the head AND
# added to the encoder's input (bench/results/ner.md has the recipes tried and their F1).
RECIPE_SETTINGS = tc.Recipe(epochs=6, batch_size=16, learning_rate=5e-4, shape_dim=16, shape_input=True,
                            head_lr_scale=5.0, seed=0)
ARCHITECTURE = "MiniLMWordShapeForTokenClassification"
CLASSIFIER = ("all-MiniLM-L6-v2 fine-tuned with a linear head per token (first sub-word piece), "
              "plus a learned word-shape embedding at its input and at the head")


BUILD = CacheBuild(RECIPE, lambda: [ner_data.DATA_DIR / f"{split}.jsonl" for split in ner_data.SPLITS],
                   lambda: json.dumps(asdict(RECIPE_SETTINGS), sort_keys=True).encode())
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet


def _rounded(report: dict) -> dict:
    return {"overall": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in report["overall"].items()},
            "per_type": {t: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
                         for t, r in report["per_type"].items()}}


def train(base, progress: Callable[[float, str], None] | None = None,
          recipe: tc.Recipe = RECIPE_SETTINGS) -> tuple[tc.TokenClassifier, dict]:
    """Fine-tune a copy of `base` (the embedder's LoadedModel) on the shipped train split by
    `recipe`, keep the best state on validation, score it on test."""
    t0 = time.perf_counter()
    data = ner_data.load_shipped()
    with request_budget.detached():
        model = tc.new_model(base.model, len(data.labels), recipe.seed, recipe.dropout, recipe.shape_dim,
                             recipe.shape_input)
        model.to(getattr(base, "device", None) or "cpu")
        out = tc.train(model, base.tokenizer, data.train, data.validation, data.labels, recipe,
                       fixed_work.first_use(progress, "the offline NER model"))
        fixed_work.finished(out.steps, out.total_steps, "the offline NER fine-tune")
        test = tc.evaluate(model, base.tokenizer, data.test, data.labels, recipe.max_length)["report"]
    meta = {"recipe": RECIPE, "classifier": CLASSIFIER, "trained_on": "ner (shipped, CoNLL-2003 types)",
            "labels": list(data.labels), "sizes": {s: len(data.split(s)) for s in ner_data.SPLITS},
            "epochs": recipe.epochs, "steps": out.steps, "batch_size": recipe.batch_size,
            "learning_rate": recipe.learning_rate, "shape_dim": recipe.shape_dim, "best_step": out.best_step,
            "validation_f1": round(out.best_val["overall"]["f1"], 4),
            "test_f1": round(test["overall"]["f1"], 4),
            "test_f1_per_type": {t: round(r["f1"], 4) for t, r in test["per_type"].items()},
            "test": _rounded(test), "step_s": round(out.step_seconds, 4),
            "train_s": round(time.perf_counter() - t0, 2)}
    return model, meta


def ensure(base, location: str | Path, root: Path | None = None,
           progress: Callable[[float, str], None] | None = None) -> tuple[Path, dict]:
    """The cached NER model's folder for the encoder `base` (read from `location`), trained now
    if it is not cached yet."""
    def train_and_save(tmp: Path) -> dict:
        model, meta = train(base, progress)
        tc.save_folder(tmp, model, base.tokenizer, meta["labels"], RECIPE_SETTINGS)
        return meta

    return BUILD.ensure_model(location, root, train_and_save)


def serve(folder: str | Path, device: str = "cpu", dtype=None) -> tuple[serving.ForTokenClassification, object]:
    """(model, tokenizer) from a saved folder, as the token-classification pipeline expects them."""
    import torch

    classifier, tokenizer, labels = tc.load_folder(folder, device, dtype or torch.float32)
    if classifier.uses_shapes:
        tokenizer = serving.with_word_shapes(tokenizer)
    return serving.ForTokenClassification(classifier, tokenizer, labels, ARCHITECTURE).eval(), tokenizer


def serving_model(base, location: str | Path, device: str, dtype, root: Path | None = None,
                  progress: Callable[[float, str], None] | None = None):
    """(model, tokenizer, meta, folder) for the offline `ner` role, trained once from `base`."""
    folder, meta = ensure(base, location, root, progress)
    model, tokenizer = serve(folder, device, dtype)
    return model, tokenizer, meta, folder
