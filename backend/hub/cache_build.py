"""One shape for everything the project builds once into the cache from a base model it is handed:
the offline sentiment, NER and QA models (builders.py, ner_builder.py, reader_builder.py) and the
default runs of chapter 4 and chapter 8 (multilingual_builder.py, compress_builder.py).

A `CacheBuild` names a recipe, the data files and the settings its key hashes (with the base
weights' folder: `conversion.build_key`), so a change to any of them builds again; its folder is
`<cache>/trained/<recipe>-<key>`, written once, atomically (`conversion.write_once`): a model with
its meta (`ensure_model`), or a default run (`ensure_run`) that a tab then reads from the cache
(`cached`: a visitor's click never builds it). The training itself is a fixed amount of work
inside `budget.detached()`; `finished` refuses to cache a run that stopped short, and
`first_use` is the progress line of a model trained on first use.
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


def cut_short(steps: int, total: int, what: str, why: str | None = None) -> RuntimeError:
    return RuntimeError(f"{what} stopped after {steps} of {total} steps{f' ({why})' if why else ''}; "
                        "nothing was cached")


def finished(steps: int, total: int, what: str) -> None:
    """Raise unless the training ran all its steps: nothing is cached from a run cut short."""
    if steps < total:
        raise cut_short(steps, total, what)


def first_use(progress: Callable[[float, str], None] | None, what: str) -> Callable[..., None]:
    """A training loop's `step(done, total, ...)` that reports "Training <what> (first use only)"."""
    def step(done: int, total: int, *_) -> None:
        if progress is not None:
            progress(done / total, f"Training {what} (first use only): step {done} of {total}")

    return step


def fine_tune(events, step: Callable[[int, int], None], what: str):
    """`finetune.run`'s events to the end, `step(done, total)` after each step -> its Outcome; raises
    unless it ran all its steps and kept weights."""
    try:
        while True:
            event = next(events)
            if event["event"] == "step":
                step(event["step"], event["total_steps"])
    except StopIteration as done:
        out = done.value
    if out.weights is None or out.steps < out.total_steps:
        raise cut_short(out.steps, out.total_steps, what, out.stopped)
    return out
