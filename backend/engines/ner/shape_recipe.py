"""The offline `ner` role's recipe: the packaged MiniLM fine-tuned once on the shipped NER set (the
book's chapter 4 method: encoder + dropout + a linear head per token, first sub-word piece
labelled), built into the cache and served by backend/hub/ner_builder.py.

Under the `local` profile there is no NER checkpoint (none is packaged, and the registries
hold none). all-MiniLM-L6-v2 is uncased, so the capital letters that mark most names never
reach it; the recipe adds a small learned word-shape embedding (lower / Capitalised / ALLCAPS /
digits / punctuation, from the word as written) to each token's input embedding (so every layer
reads capitalisation in context) and beside its hidden state at the head (bench/results/ner.md
has the recipes tried). A fixed number of steps, inside `budget.detached()` (runtime/fixed_work.py).
"""

from __future__ import annotations

import time
from typing import Callable

from backend.engines.ner import data as ner_data
from backend.engines.ner import token_classification as tc
from backend.runtime import budget as request_budget, fixed_work

RECIPE = "ner-shape-v2"  # bump when the recipe changes
# 6 epochs of 50 batches (300 steps, about 2.3 min on 2 quiet cores), word shapes at the head AND
# added to the encoder's input (bench/results/ner.md has the recipes tried and their F1).
RECIPE_SETTINGS = tc.Recipe(epochs=6, batch_size=16, learning_rate=5e-4, shape_dim=16, shape_input=True,
                            head_lr_scale=5.0, seed=0)
CLASSIFIER = ("all-MiniLM-L6-v2 fine-tuned with a linear head per token (first sub-word piece), "
              "plus a learned word-shape embedding at its input and at the head")


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
