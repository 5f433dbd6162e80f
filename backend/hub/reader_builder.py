"""The offline `qa` reader: MiniLM with a span head, fine-tuned once, here, on the shipped QA set,
by its recipe (backend/engines/qa/reader_recipe.py: the training and the no-answer threshold; here:
the cache and the serving). Like the NER builder: the one builder shape (cache_build.py), written
with `conversion.write_once` under `<cache>/trained/<RECIPE>-<key>`, the key hashing the data, the
base weights and the recipe. The folder is a plain `save_pretrained` folder:
`AutoModelForQuestionAnswering.from_pretrained` reads it.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from backend.engines.qa import data as qa_data
from backend.engines.qa.reader_recipe import (  # noqa: F401  (the recipe's names, read here too)
    CLASSIFIER, RECIPE, RECIPE_SETTINGS, train)
from backend.hub.cache_build import CacheBuild
from backend.hub.conversion import META_FILE  # noqa: F401  (tests read it here)

BUILD = CacheBuild(RECIPE, lambda: [qa_data.DATA_DIR / f"{split}.jsonl" for split in qa_data.SPLITS],
                   lambda: json.dumps(asdict(RECIPE_SETTINGS), sort_keys=True).encode(), (__name__,))
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet


def _saved(tmp: Path, base, model, meta: dict) -> dict:
    model.save_pretrained(tmp)
    base.tokenizer.save_pretrained(tmp)
    return meta


def ensure(base, location: str | Path, root: Path | None = None,
           progress: Callable[[float, str], None] | None = None) -> tuple[Path, dict]:
    """The cached reader's folder for `base` (read from `location`), trained now if need be."""
    return BUILD.ensure_model(location, root, lambda tmp: _saved(tmp, base, *train(base, progress)))


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
