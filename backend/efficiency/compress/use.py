"""The chapter 8 benchmark's models put to use: every variant on one sentence
(`/compress_predict`, with where they disagree) and each model as a download
(`/compress_download`, a zip of the files whose size the table reports)."""

from __future__ import annotations

import json
import threading
import time
import zipfile
from pathlib import Path

import numpy as np

from backend.efficiency.compress.api import run_folder
from backend.engines.compression import pipeline as compress_run
from backend.engines.classify import finetune
from backend.runtime import budget, downloads
from backend.runtime.device import gpu_task
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text, one_of

_PREDICTORS: dict = {}  # (folder, key) -> predict; the last run's models only
_LOCK = threading.Lock()
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json", "labels.json")


def _state(folder: Path) -> dict:
    return json.loads((folder / compress_run.STATE_FILE).read_text())


def variant_keys(folder: Path) -> list[str]:
    """The variants a run holds, in the table's order."""
    state = _state(folder)
    done = state["done"]
    keys = ["teacher"]
    keys += ["student"] if "distil" in done else []
    keys += ["student_int8"] if "quantize" in done else []
    keys += ["student_onnx"] if "onnx" in done else []
    keys += ["student_onnx_int8"] if "onnx_int8" in done else []
    if "prune" in done:
        keys += [f"pruned_{round(100 * p['sparsity'])}" for p in state["facts"]["prune"]["pruned"]]
    return keys


def _predictor(key: str, teacher_dir: Path, folder: Path):
    with _LOCK:
        if not any(k[0] == str(folder) for k in _PREDICTORS):
            _PREDICTORS.clear()  # another run's models: free them
        if (str(folder), key) not in _PREDICTORS:
            _, tokenizer, _ = finetune.load_folder(teacher_dir)
            _PREDICTORS[(str(folder), key)] = compress_run.load_variant(key, tokenizer, teacher_dir, folder)
        return _PREDICTORS[(str(folder), key)]


@gpu_task(duration=60)
def compress_predict(text, run_id="default") -> dict:
    """`/compress_predict`: every variant of a run on `text`: label, probabilities, milliseconds;
    `disagree` lists the variants whose label differs from the fine-tuned baseline's."""
    text = check_text(text, "text")
    teacher_dir, folder = run_folder(run_id if run_id not in (None, "") else "default")
    labels = json.loads((teacher_dir / "labels.json").read_text())
    out = []
    with budget.scope():
        for key in variant_keys(folder):
            budget.check(f"{len(out)} variants run")
            predict = _predictor(key, teacher_dir, folder)
            t0 = time.perf_counter()
            logits = predict([text])[0]
            ms = 1000 * (time.perf_counter() - t0)
            probs = np.exp(logits - logits.max())
            probs /= probs.sum()
            out.append({"key": key, "variant": _label(key), "label": labels[int(probs.argmax())],
                        "probabilities": {l: round(float(p), 4) for l, p in zip(labels, probs)}, "ms": round(ms, 2)})
    base = out[0]["label"]
    return {"text": text, "run_id": run_id or "default", "variants": out,
            "disagree": [r["key"] for r in out if r["label"] != base], "baseline_label": base}


def _label(key: str) -> str:
    from backend.efficiency.compress.report import label_of

    return label_of(key)


def _files_of(key: str, teacher_dir: Path, folder: Path) -> list[Path]:
    if key == "teacher":
        return sorted(p for p in teacher_dir.iterdir() if p.is_file() and p.name != "meta.json")
    if key == "student":
        return sorted(p for p in (folder / compress_run.STUDENT_DIR).iterdir() if p.is_file())
    if key.startswith("pruned_"):
        return sorted(p for p in (folder / f"pruned-{key[len('pruned_'):]}").iterdir() if p.is_file())
    name = {"student_int8": compress_run.TORCH_INT8_FILE, "student_onnx": compress_run.ONNX_FILE,
            "student_onnx_int8": compress_run.ONNX_INT8_FILE}[key]
    student = folder / compress_run.STUDENT_DIR
    return [folder / name] + [student / f for f in TOKENIZER_FILES if (student / f).exists()]


def compress_download(variant="student_onnx_int8", run_id="default", root: str | None = None) -> dict:
    """`/compress_download`: one variant's files as a zip (model + tokenizer + labels), in a new
    temp folder (under `root` when given: the app passes Gradio's upload folder)."""
    teacher_dir, folder = run_folder(run_id if run_id not in (None, "") else "default")
    keys = variant_keys(folder)
    if variant in (None, ""):
        variant = keys[-1]
    variant = one_of("variant", variant, keys)
    files = _files_of(variant, teacher_dir, folder)
    if not files:
        raise InputError(f"The {variant} model has no files in this run.")
    # One zip per address at a time, refused when the download folder is full (backend/runtime/downloads.py).
    out = downloads.new_folder(root, "compress", sum(f.stat().st_size for f in files)) / f"{variant}.zip"
    with zipfile.ZipFile(out, "w") as z:
        for f in files:
            kind = zipfile.ZIP_STORED if f.suffix in (".safetensors", ".onnx", ".pt") else zipfile.ZIP_DEFLATED
            z.write(f, f"{variant}/{f.name}", compress_type=kind)
    return {"path": str(out), "variant": variant, "files": [f.name for f in files],
            "megabytes": round(out.stat().st_size / 2 ** 20, 2), "run_id": run_id or "default"}
