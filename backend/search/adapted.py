"""The reader Ask the corpus reads with on the local profile: the offline reader adapted to the glossary
(backend/hub/corpus_reader_builder.py, built at set-up), and the before/after table stored beside it.

The table is read from the cache and never measured here (`stored_table`: None until `make build` built it).
The adapted model is loaded once per process (`adapted_reader`); on a machine not set up by `make build`, the
first Ask builds it (about a minute), as the `qa` role's own reader is trained on first use.
"""

from __future__ import annotations

import threading
from pathlib import Path

from backend import hub

_LOCK = threading.Lock()
_LOADED: dict[str, tuple] = {}  # folder -> (model, tokenizer, meta)


def _base_location() -> Path:
    return Path(hub.get_hub().resolve("embedder").location)


def stored_table() -> dict | None:
    """The chapter-7 table measured when the adapted reader was built, with its reader's folder name; None
    when it is not built yet. No model runs."""
    from backend.hub import corpus_reader_builder as built
    from backend.runtime.errors import ModelLoadError

    try:
        folder = built.cached(_base_location())
    except (OSError, ValueError, ModelLoadError):  # no packaged encoder, or no question set: nothing stored
        return None
    return None if folder is None else {**built.table(folder), "folder": folder.name}


def adapted_reader(general, progress=None) -> tuple:
    """(model, tokenizer, provenance) of the adapted reader, on the general reader's (`general`, the `qa`
    role's LoadedModel) device; built now if the cache lacks it."""
    import json

    from backend.hub import corpus_reader_builder as built
    from backend.hub.conversion import META_FILE

    location = _base_location()
    folder = built.cached(location)
    if folder is None:
        folder, _ = built.ensure(hub.load("embedder"), location, progress=progress)
    key = f"{folder}:{general.device}"
    with _LOCK:
        if key not in _LOADED:
            model, tokenizer = built.serve(folder, general.device)
            _LOADED[key] = (model, tokenizer, json.loads((Path(folder) / META_FILE).read_text()))
    model, tokenizer, meta = _LOADED[key]
    about = {**general.describe(), "checkpoint": f"{general.checkpoint} reader adapted to the glossary",
             "classifier": meta["classifier"], "trained_on": meta["trained_on"],
             "null_threshold": meta["null_threshold"], "validation_exact": meta["validation_exact"],
             "validation_f1": meta["validation_f1"], "folder": Path(folder).name}
    return model, tokenizer, about
