"""One shape for everything the project builds once into the cache from a base model it is handed:
the offline sentiment, NER and QA models (builders.py, ner_builder.py, reader_builder.py) and the
default runs of chapter 4 and chapter 8 (multilingual_builder.py, compress_builder.py).

A `CacheBuild` names a recipe, the data files, the settings and the code its key hashes (with the
base weights' folder: `conversion.build_key`; the code: `code_keys`, the builder's module and the
engine modules it imports, this module included), so a change to any of them builds again; its folder is
`<cache>/trained/<recipe>-<key>`, written once, atomically (`conversion.write_once`): a model with
its meta (`ensure_model`), or a default run (`ensure_run`, `DefaultRun`) that a tab then reads
from the cache (`cached`: a visitor's click never builds it). The training itself is a fixed
amount of work inside `budget.detached()` (runtime/fixed_work.py); its recipe lives beside the
model code it trains (engines/<job>/*_recipe.py), the hub keeps the cache and the serving.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from backend.hub.code_keys import code_salt
from backend.hub.conversion import META_FILE, build_key, build_trained, trained_dir, write_once


@dataclass(frozen=True)
class CacheBuild:
    recipe: str  # the recipe's name and version: bump it when the recipe changes
    data: Callable[[], list[Path]]  # the data files the build reads
    settings: Callable[[], bytes] = lambda: b""  # the recipe's settings, as bytes
    code: tuple[str, ...] = ()  # the builder's module(s): with the engine modules they import, the code keyed

    def key(self, location: str | Path) -> str:
        return build_key(self.recipe, self.data(), Path(location), self.settings() + self.code_salt())

    def code_salt(self) -> bytes:
        return code_salt(self.recipe, self.code + (__name__,)) if self.code else b""

    def folder(self, location: str | Path, root: Path | None = None) -> Path:
        """Where the build from the base weights at `location` lives (built or not yet)."""
        return trained_dir(self.recipe, self.key(location), root)

    def ensure_model(self, location: str | Path, root: Path | None,
                     train_and_save: Callable[[Path], dict]) -> tuple[Path, dict]:
        """The model's folder, trained now by `train_and_save(tmp)` (-> its meta) if it is not cached
        yet. -> (folder, meta + "cached")."""
        return build_trained(self.folder(location, root), train_and_save)

    def ensure_run(self, location: str | Path, root: Path | None, build: Callable[[Path], float]) -> tuple[Path, bool]:
        """The default run's folder, built now by `build(tmp)` (-> its seconds, noted in its meta) if it is
        not cached yet. -> (folder, built now)."""
        def build_and_note(tmp: Path) -> None:
            built_s = build(tmp)
            (tmp / META_FILE).write_text(json.dumps({"recipe": self.recipe, "built_s": built_s}))

        folder = self.folder(location, root)
        return folder, write_once(folder, build_and_note)

    def cached(self, location: str | Path, root: Path | None = None) -> Path | None:
        """The folder if it is built, else None."""
        folder = self.folder(location, root)
        return folder if (folder / ".complete").exists() else None


@dataclass(frozen=True)
class DefaultRun:
    """A default run that a tab shows from the cache (chapter 4's, chapter 8's): its `cache`, its
    recipe's `make(base, folder, progress)` (-> the results, written into the folder as
    `results_file`) and where the results say how long the build took (`built_s`)."""

    cache: CacheBuild
    make: Callable
    results_file: str
    built_s: Callable[[dict], float]

    def ensure(self, base, location: str | Path, root: Path | None = None,
               progress: Callable[[float, str], None] | None = None) -> tuple[Path, bool]:
        """The run's folder for the encoder `base` (read from `location`), built now if it is not
        cached yet. -> (folder, built now)."""
        return self.cache.ensure_run(location, root, lambda tmp: self.built_s(self.make(base, tmp, progress)))

    def cached(self, location: str | Path, root: Path | None = None) -> Path | None:
        """The run's folder if it is built, else None (a visitor's click never builds it)."""
        return self.cache.cached(location, root)

    def results(self, folder: Path) -> dict:
        return json.loads((Path(folder) / self.results_file).read_text())
