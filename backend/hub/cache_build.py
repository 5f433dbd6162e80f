"""One shape for everything the project builds once into the cache from a base model it is handed:
the offline sentiment, NER and QA models (builders.py, ner_builder.py, reader_builder.py) and the
default runs of chapter 4 and chapter 8 (multilingual_builder.py, compress_builder.py).

A `CacheBuild` names a recipe, the data files and the settings its key hashes (with the base
weights' folder: `conversion.build_key`), so a change to any of them builds again; its folder is
`<cache>/trained/<recipe>-<key>`, written once, atomically (`conversion.write_once`): a model with
its meta (`ensure_model`), or a default run (`ensure_run`) that a tab then reads from the cache
(`cached`: a visitor's click never builds it). The training itself is a fixed amount of work
inside `budget.detached()` (runtime/fixed_work.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from backend.hub.conversion import build_key, build_trained, trained_dir, write_once


@dataclass(frozen=True)
class CacheBuild:
    recipe: str  # the recipe's name and version: bump it when the recipe changes
    data: Callable[[], list[Path]]  # the data files the build reads
    settings: Callable[[], bytes] = lambda: b""  # the recipe's settings, as bytes

    def key(self, location: str | Path) -> str:
        return build_key(self.recipe, self.data(), Path(location), self.settings())

    def folder(self, location: str | Path, root: Path | None = None) -> Path:
        """Where the build from the base weights at `location` lives (built or not yet)."""
        return trained_dir(self.recipe, self.key(location), root)

    def ensure_model(self, location: str | Path, root: Path | None,
                     train_and_save: Callable[[Path], dict]) -> tuple[Path, dict]:
        """The model's folder, trained now by `train_and_save(tmp)` (-> its meta) if it is not cached
        yet. -> (folder, meta + "cached")."""
        return build_trained(self.folder(location, root), train_and_save)

    def ensure_run(self, location: str | Path, root: Path | None, build: Callable[[Path], object]) -> tuple[Path, bool]:
        """The default run's folder, built now by `build(tmp)` if it is not cached yet. -> (folder, built now)."""
        folder = self.folder(location, root)
        return folder, write_once(folder, build)

    def cached(self, location: str | Path, root: Path | None = None) -> Path | None:
        """The folder if it is built, else None."""
        folder = self.folder(location, root)
        return folder if (folder / ".complete").exists() else None


def results(folder: Path, name: str) -> dict:
    """A default run's results file."""
    return json.loads((Path(folder) / name).read_text())
