"""The offline `qa` reader's recipe: MiniLM with a span head, fine-tuned once on the shipped QA set
(built into the cache and served by backend/hub/reader_builder.py).

The book's chapter 7 reader (an encoder whose linear head gives every token a start and an end
logit; "no answer" is the [CLS] span), trained SQuAD 2.0 style on assets/data/qa (written for the
project, see its data card) by `backend.engines.qa.reader`: a fixed number of epochs, inside
`budget.detached()` (runtime/fixed_work.py). The no-answer threshold (best span - null logit) is the
one that maximises F1 on the validation split, and is saved in the model's config (`null_threshold`).
"""

from __future__ import annotations

import time
from typing import Callable

from backend.engines.qa import data as qa_data, reader
from backend.runtime import budget as request_budget, fixed_work

RECIPE = "reader-span-v1"  # bump when the recipe changes
RECIPE_SETTINGS = reader.Recipe()
CLASSIFIER = ("all-MiniLM-L6-v2 with a span head (a start and an end logit per token; 'no answer' is the "
              "[CLS] span), fine-tuned SQuAD 2.0 style")


def _rounded(metrics: dict) -> dict:
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in metrics.items()}


def train(base, progress: Callable[[float, str], None] | None = None,
          recipe: reader.Recipe = RECIPE_SETTINGS):
    """Fine-tune a span-head copy of `base` (the embedder's LoadedModel) on the train split; choose the
    no-answer threshold on validation and report SQuAD 2.0 metrics there."""
    t0 = time.perf_counter()
    train_set, validation = qa_data.load("train"), qa_data.load("validation")
    with request_budget.detached():
        model = reader.new_model(base.model, recipe.seed)
        info = reader.train(model, base.tokenizer, train_set, recipe,
                            fixed_work.first_use(progress, "the offline QA reader"))
        fixed_work.finished(info["steps"], info["total_steps"], "the offline reader")
        at_zero = reader.evaluate(model, base.tokenizer, validation, threshold=0.0)
        threshold = at_zero["best_threshold"]
        tuned = reader.evaluate(model, base.tokenizer, validation, threshold=threshold)
    model.config.null_threshold = threshold
    model.config.architectures = [type(model).__name__]
    m = tuned["metrics"]
    meta = {"recipe": RECIPE, "classifier": CLASSIFIER, "trained_on": "qa (shipped, SQuAD 2.0 style)",
            "sizes": {"train": len(train_set), "validation": len(validation)},
            "unanswerable": {"train": sum(not e.answerable for e in train_set),
                             "validation": sum(not e.answerable for e in validation)},
            "epochs": recipe.epochs, "steps": info["steps"], "batch_size": recipe.batch_size,
            "learning_rate": recipe.learning_rate, "windows": info["windows"], "final_loss": info["final_loss"],
            "null_threshold": round(threshold, 4),
            "validation_exact": round(m["exact"], 2), "validation_f1": round(m["f1"], 2),
            "validation": _rounded(m), "validation_at_zero": _rounded(at_zero["metrics"]),
            "train_loop_s": info["train_loop_s"], "train_s": round(time.perf_counter() - t0, 2)}
    return model, meta
