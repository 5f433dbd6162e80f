"""The offline `qa` reader: MiniLM with a span head, fine-tuned once, here, on the shipped QA set.

The book's chapter 7 reader (an encoder whose linear head gives every token a start and an end
logit; "no answer" is the [CLS] span), trained SQuAD 2.0 style on assets/data/qa (written for the
project, see its data card) by `backend.engines.qa.reader`. Like the NER builder: a fixed number of
epochs, inside `budget.detached()`, written with `conversion.write_once` under
`<cache>/trained/<RECIPE>-<key>`, the key hashing the data, the base weights and the recipe. The
no-answer threshold (best span - null logit) is the one that maximises F1 on the validation split,
and is saved in the model's config (`null_threshold`). The folder is a plain `save_pretrained`
folder: `AutoModelForQuestionAnswering.from_pretrained` reads it.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from backend.engines.qa import data as qa_data, reader
from backend.hub.cache_build import CacheBuild
from backend.hub.conversion import META_FILE  # noqa: F401  (tests read it here)
from backend.runtime import budget as request_budget, fixed_work

RECIPE = "reader-span-v1"  # bump when the recipe changes
RECIPE_SETTINGS = reader.Recipe()
CLASSIFIER = ("all-MiniLM-L6-v2 with a span head (a start and an end logit per token; 'no answer' is the "
              "[CLS] span), fine-tuned SQuAD 2.0 style")


BUILD = CacheBuild(RECIPE, lambda: [qa_data.DATA_DIR / f"{split}.jsonl" for split in qa_data.SPLITS],
                   lambda: json.dumps(asdict(RECIPE_SETTINGS), sort_keys=True).encode())
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet


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


def ensure(base, location: str | Path, root: Path | None = None,
           progress: Callable[[float, str], None] | None = None) -> tuple[Path, dict]:
    """The cached reader's folder for the encoder `base` (read from `location`), trained now if needed."""
    def train_and_save(tmp: Path) -> dict:
        model, meta = train(base, progress)
        model.save_pretrained(tmp)
        base.tokenizer.save_pretrained(tmp)
        return meta

    return BUILD.ensure_model(location, root, train_and_save)


def serve(folder: str | Path, device: str = "cpu", dtype=None):
    """(model, tokenizer) from a saved folder."""
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    model = AutoModelForQuestionAnswering.from_pretrained(folder, dtype=dtype or torch.float32).to(device).eval()
    return model, AutoTokenizer.from_pretrained(folder)


def serving_model(base, location: str | Path, device: str, dtype, root: Path | None = None,
                  progress: Callable[[float, str], None] | None = None):
    """(model, tokenizer, meta, folder) for the offline `qa` reader, trained once from `base`."""
    folder, meta = ensure(base, location, root, progress)
    model, tokenizer = serve(folder, device, dtype)
    return model, tokenizer, meta, folder
