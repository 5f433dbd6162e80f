"""A default run built once at set-up into the cache and shown from there (chapter 4's and chapter 8's):
the three steps their builders share. Each builder names its folder (`cache_dir`) and its `build`."""

from __future__ import annotations

import json
from pathlib import Path

from backend.hub.conversion import write_once


def ensure(folder: Path, build) -> tuple[Path, bool]:
    """`folder`, built now by `build(tmp)` if it is not cached yet (atomically) -> (folder, built now)."""
    return folder, write_once(folder, build)


def cached(folder: Path) -> Path | None:
    """`folder` if it is built, else None (a visitor's click never builds it)."""
    return folder if (folder / ".complete").exists() else None


def results(folder: Path, name: str) -> dict:
    return json.loads((Path(folder) / name).read_text())
