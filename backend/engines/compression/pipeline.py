"""The chapter 8 pipeline on one classifier: distil, quantize, export to ONNX, quantize the
graph, prune; then benchmark every variant the same way in one run.

`run` is handed a fine-tuned teacher (an `EncoderClassifier`), its tokenizer, the dataset and a
folder. Each step writes its model into the folder and records itself in `state.json`, so a
later call with the same settings continues where the last one stopped (the learner's "next
step") instead of redoing the distillation. Every call ends with one benchmark of all the
variants present (`perf_bench`: accuracy on the test split, latency at batch 1, size of the
files), measured together so their ratios are honest. Nothing here asks the hub.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from backend.engines.compression import distill, onnx_ort, perf_bench, prune, quantize
from backend.engines.classify import finetune

STEPS = ("distil", "quantize", "onnx", "onnx_int8", "prune")
STATE_FILE = "state.json"
LOGITS_SHARE = 0.1  # of the distil step's progress bar: the teacher's logits on the training set
STUDENT_DIR = "student"
TORCH_INT8_FILE = "student_int8.pt"
ONNX_FILE = "student.onnx"
ONNX_INT8_FILE = "student_int8.onnx"
NAMES = {"teacher": "Fine-tuned baseline (6 layers)", "student": "Distilled student",
         "student_int8": "Student + torch int8", "student_onnx": "Student on ONNX Runtime",
         "student_onnx_int8": "Student on ONNX Runtime, int8"}


@dataclass
class Settings:
    temperatures: tuple[float, ...] = (2.0,)
    alphas: tuple[float, ...] = (0.5,)
    layers: tuple[int, ...] = (0, 2, 4)
    epochs: int = 6
    learning_rate: float = 1e-4
    sparsities: tuple[float, ...] = (0.5, 0.7, 0.9)
    latency_runs: int = 100


def _noop(*_a, **_k) -> None:
    return None


def torch_predictor(model, tokenizer):
    def predict(texts: list[str]) -> np.ndarray:
        with torch.inference_mode():
            return model(**distill.encode(tokenizer, texts))[0].float().numpy()
    return predict


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).glob("*.safetensors"))


def _load_state(folder: Path, settings: Settings) -> dict:
    path = folder / STATE_FILE
    state = json.loads(path.read_text()) if path.exists() else {}
    if state.get("settings") != json.loads(json.dumps(asdict(settings))):
        state = {"settings": asdict(settings), "done": [], "timings": {}}
    return state


def _save_state(folder: Path, state: dict) -> None:
    tmp = folder / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(folder / STATE_FILE)


def _distil(teacher, tokenizer, ds, settings: Settings, folder: Path, labels, check, progress) -> dict:
    trials = distill.grid(settings.temperatures, settings.alphas)

    def on_batch(done, total):
        progress(LOGITS_SHARE * done / total, f"Distilling: the teacher's soft labels, {done} of {total} training "
                                              "sentences")
        check()
    on_batch(0, len(ds.train))
    t_logits = distill.logits_of(teacher, tokenizer, [t for t, _ in ds.train], on_batch=on_batch)
    best, rows = None, []
    for i, (temp, alpha) in enumerate(trials):
        started = time.perf_counter()

        def on_step(step, total, i=i, started=started):
            left = (time.perf_counter() - started) / max(1, step) * (total - step + (len(trials) - i - 1) * total)
            progress(LOGITS_SHARE + (1 - LOGITS_SHARE) * (i + step / total) / len(trials),
                     f"Distilling: trial {i + 1} of {len(trials)} (T={temp:g}, alpha={alpha:g}), step {step} of "
                     f"{total}" + (f", about {left:.0f} s of training left" if step else ""))
            check()
        s = distill.Settings(temperature=temp, alpha=alpha, layers=tuple(settings.layers), epochs=settings.epochs,
                            learning_rate=settings.learning_rate)
        student, res = distill.train_student(teacher, tokenizer, ds.train, ds.validation, s, t_logits, on_step=on_step)
        rows.append({"temperature": temp, "alpha": alpha, "val_accuracy": round(res.val_accuracy, 4),
                     "best_epoch": res.best_epoch, "seconds": res.seconds, "history": res.history})
        if best is None or res.val_accuracy > best[1].val_accuracy:
            best = (student, res, temp, alpha)
    student, res, temp, alpha = best
    finetune.save_folder(folder / STUDENT_DIR, student.encoder, student.state_dict(), tokenizer, labels)
    return {"trials": rows, "chosen": {"temperature": temp, "alpha": alpha, "val_accuracy": round(res.val_accuracy, 4),
                                       "best_epoch": res.best_epoch}}


def _student(folder: Path):
    model, _, _ = finetune.load_folder(folder / STUDENT_DIR)
    return model


def _torch_int8(student):
    return quantize.int8_copy(student, token_scales=False)


def _build_step(step: str, teacher, tokenizer, ds, settings, folder, labels, check, progress) -> dict:
    if step == "distil":
        return _distil(teacher, tokenizer, ds, settings, folder, labels, check, progress)
    student = _student(folder)
    if step == "quantize":
        torch.save(_torch_int8(student).state_dict(), folder / TORCH_INT8_FILE)
        return {"linears_int8": len(quantize.linear_names(student))}
    if step == "onnx":
        onnx_ort.export(student, tokenizer, folder / ONNX_FILE)
        return {"exporter": "torch.onnx.export(dynamo=False)", **onnx_ort.versions()}
    if step == "onnx_int8":
        onnx_ort.quantize(folder / ONNX_FILE, folder / ONNX_INT8_FILE)
        return {"quantizer": "onnxruntime.quantization.quantize_dynamic(QInt8)"}
    facts = []
    for s in settings.sparsities:
        check()
        pruned = prune.pruned_copy(student, s)
        sub = folder / f"pruned-{round(100 * s)}"
        finetune.save_folder(sub, pruned.encoder, pruned.state_dict(), tokenizer, labels)
        facts.append({"sparsity": s, "measured_sparsity": round(prune.sparsity_of(pruned), 4), "folder": sub.name,
                      "compressed_mb": round(sum(prune.compressed_mb(f) for f in _files(sub)), 3)})
    return {"pruned": facts,
            "student_compressed_mb": round(sum(prune.compressed_mb(f) for f in _files(folder / STUDENT_DIR)), 3)}


def _variants(teacher, tokenizer, teacher_dir: Path, folder: Path, state: dict) -> list[perf_bench.Variant]:
    out = [perf_bench.Variant("teacher", torch_predictor(teacher, tokenizer), _files(teacher_dir))]
    done = state["done"]
    if "distil" not in done:
        return out
    student = _student(folder)
    out.append(perf_bench.Variant("student", torch_predictor(student, tokenizer), _files(folder / STUDENT_DIR)))
    if "quantize" in done:
        out.append(perf_bench.Variant("student_int8", torch_predictor(_torch_int8(student), tokenizer),
                                      [folder / TORCH_INT8_FILE]))
    for step, key, name in (("onnx", "student_onnx", ONNX_FILE), ("onnx_int8", "student_onnx_int8", ONNX_INT8_FILE)):
        if step in done:
            sess = onnx_ort.session(folder / name)
            out.append(perf_bench.Variant(key, onnx_ort.predictor(sess, tokenizer), [folder / name]))
    if "prune" in done:
        for p in state["facts"]["prune"]["pruned"]:
            model, _, _ = finetune.load_folder(folder / p["folder"])
            out.append(perf_bench.Variant(f"pruned_{round(100 * p['sparsity'])}", torch_predictor(model, tokenizer),
                                          _files(folder / p["folder"])))
    return out


def load_variant(key: str, tokenizer, teacher_dir: Path, folder: Path):
    """`predict(texts) -> logits` of one saved variant (the sentence box, downloads' checks)."""
    if key == "teacher":
        return torch_predictor(finetune.load_folder(teacher_dir)[0], tokenizer)
    if key == "student":
        return torch_predictor(_student(folder), tokenizer)
    if key == "student_int8":
        return torch_predictor(_torch_int8(_student(folder)), tokenizer)
    if key in ("student_onnx", "student_onnx_int8"):
        name = ONNX_FILE if key == "student_onnx" else ONNX_INT8_FILE
        return onnx_ort.predictor(onnx_ort.session(folder / name), tokenizer)
    if key.startswith("pruned_"):
        return torch_predictor(finetune.load_folder(folder / f"pruned-{key[len('pruned_'):]}")[0], tokenizer)
    raise KeyError(key)


def run(teacher, tokenizer, labels: list[str], ds, teacher_dir: Path, folder: Path, settings: Settings,
        through: str | None = STEPS[-1], check: Callable[[], None] = _noop,
        progress: Callable[[float, str], None] = _noop) -> dict:
    """Run the steps up to `through` (None: none; those already in `folder` for these settings are kept),
    then benchmark every variant present. -> plain results (see `report.tables`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = _load_state(folder, settings)
    state.setdefault("facts", {})
    todo = STEPS[:STEPS.index(through) + 1] if through else ()
    for i, step in enumerate(todo):
        if step in state["done"]:
            continue
        check()
        base = i / (len(todo) + 1)

        def say(f, text, base=base):
            progress(base + f / (len(todo) + 1), text)
        say(0.0, f"Step {i + 1} of {len(todo)}: {step}")
        t0 = time.perf_counter()
        state["facts"][step] = _build_step(step, teacher, tokenizer, ds, settings, folder, labels, check, say)
        state["timings"][step] = round(time.perf_counter() - t0, 2)
        state["done"].append(step)
        _save_state(folder, state)
    progress(len(todo) / (len(todo) + 1), "Benchmarking every variant (accuracy, latency at batch 1, size)")
    t0 = time.perf_counter()
    variants = _variants(teacher, tokenizer, teacher_dir, folder, state)
    texts, ys = [t for t, _ in ds.test], [y for _, y in ds.test]
    query = sorted(texts, key=len)[len(texts) // 2]
    rows = perf_bench.run(variants, texts, ys, query, runs=settings.latency_runs, check=check)
    timings = dict(state["timings"], benchmark=round(time.perf_counter() - t0, 2))
    progress(1.0, "Done")
    return {"rows": rows, "facts": state["facts"], "done": list(state["done"]), "timings": timings,
            "settings": state["settings"], "query": query, "labels": list(labels), "test_labels": ys,
            "test_size": len(texts), "threads": torch.get_num_threads()}
