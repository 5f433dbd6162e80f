"""The reader Ask the corpus reads with on the local profile: the offline reader adapted to the glossary
(backend/hub/corpus_reader_builder.py, built at set-up), and the before/after table stored beside it.

The table is read from the cache and never measured here (`stored_table`: None until `make build` built it).
The adapted model is loaded once per process (`adapted_reader`); on a machine not set up by `make build`, Ask
reads with the general reader and says so.
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
    if folder is None:
        return None
    from backend.search import retrieval  # the built reader's rule and table used Ask's retrieval (this code's)

    return {**built.table(folder), "folder": folder.name, "retrieval": retrieval.describe()}


NOT_BUILT = ("The reader adapted to the glossary is not built on this machine (set-up builds it: `python -m "
             "backend.hub build`, which `make run` runs), so the extractive answer is the general reader's.")


def adapted_reader(general) -> tuple:
    """(model, tokenizer, provenance, notice) of the adapted reader, on the general reader's (`general`, the `qa`
    role's LoadedModel) device. Where set-up has not built it, the general reader itself with a notice that
    says so (a visitor's click never trains it: 15 minutes on a busy 2-core box)."""
    import json

    from backend.hub import corpus_reader_builder as built
    from backend.hub.conversion import META_FILE

    try:
        folder = built.cached(_base_location())
    except OSError:  # no question set shipped
        folder = None
    if folder is None:
        return general.model, general.tokenizer, general.describe(), NOT_BUILT
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
    return model, tokenizer, about, None
