"""The offline `ner` role: MiniLM fine-tuned once, here, on the shipped NER set, by its recipe
(backend/engines/ner/shape_recipe.py: the training, with its word shapes; here: the cache and the
serving, with a tokenizer that computes those shapes from the text).

Like the sentiment builder (`builders.py`): the one builder shape (cache_build.py), written with
`conversion.write_once` under `<cache>/trained/<RECIPE>-<key>`, the key hashing the data, the base
weights and the recipe. The served model looks like an `AutoModelForTokenClassification` to
transformers' pipeline.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from backend.engines.ner import data as ner_data
from backend.engines.ner import token_classification as tc
from backend.engines.ner import serving
from backend.engines.ner.shape_recipe import (  # noqa: F401  (the recipe's names, read here too)
    CLASSIFIER, RECIPE, RECIPE_SETTINGS, train)
from backend.hub.cache_build import CacheBuild
from backend.hub.conversion import META_FILE  # noqa: F401  (tests read it here)

ARCHITECTURE = "MiniLMWordShapeForTokenClassification"
BUILD = CacheBuild(RECIPE, lambda: [ner_data.DATA_DIR / f"{split}.jsonl" for split in ner_data.SPLITS],
                   lambda: json.dumps(asdict(RECIPE_SETTINGS), sort_keys=True).encode(), (__name__,))
cache_dir = BUILD.folder  # (location of the base weights, root=None) -> the folder, built or not yet


def _saved(tmp: Path, base, model, meta: dict) -> dict:
    tc.save_folder(tmp, model, base.tokenizer, meta["labels"], RECIPE_SETTINGS)
    return meta


def ensure(base, location: str | Path, root: Path | None = None,
           progress: Callable[[float, str], None] | None = None) -> tuple[Path, dict]:
    """The cached NER model's folder for `base` (read from `location`), trained now if need be."""
    return BUILD.ensure_model(location, root, lambda tmp: _saved(tmp, base, *train(base, progress)))


def serve(folder: str | Path, device: str = "cpu", dtype=None) -> tuple[serving.ForTokenClassification, object]:
    """(model, tokenizer) from a saved folder, as the token-classification pipeline expects them."""
    import torch

    classifier, tokenizer, labels = tc.load_folder(folder, device, dtype or torch.float32)
    if classifier.uses_shapes:
        tokenizer = serving.with_word_shapes(tokenizer)
    return serving.ForTokenClassification(classifier, tokenizer, labels, ARCHITECTURE).eval(), tokenizer


def serving_model(base, location: str | Path, device: str, dtype, root: Path | None = None,
                  progress: Callable[[float, str], None] | None = None):
    """(model, tokenizer, meta, folder) for the offline `ner` role, trained once from `base`."""
    folder, meta = ensure(base, location, root, progress)
    model, tokenizer = serve(folder, device, dtype)
    return model, tokenizer, meta, folder
