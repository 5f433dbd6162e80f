"""`/compress`, `/compress_predict`, `/compress_download`: the book's chapter 8 as one benchmark.

The default run (teacher, distilled student with a small grid search, torch int8, ONNX Runtime,
ONNX Runtime int8, magnitude pruning, all benchmarked in one run) is built at set-up by
`python -m backend.hub build` (backend/hub/compress_builder.py); `/compress` with
run="default" shows it at once, step by step (`through`) or whole. run="custom" runs the
learner's own temperature, alpha, student depth and sparsity live from the cached teacher,
under the request's budget, with progress; a Stop or the budget ends it between steps and
training steps, and the steps it finished stay cached, so the next call continues there.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from backend.efficiency.compress import claims, live as live_runs, report
from backend.engines.compression import pipeline as compress_run, distill
from backend.engines.classify import datasets, finetune
from backend.hub import compress_builder
from backend.runtime import budget, config
from backend.runtime.device import gpu_task
from backend.runtime.errors import InputError
from backend.runtime.validation import as_float, as_int, one_of

RUNS = ("default", "custom")
THROUGH = ("teacher",) + compress_run.STEPS + ("all",)
LIVE_DIR = compress_builder.LIVE_DIR
LIVE_EPOCHS = 3
LIVE_LATENCY_RUNS = 30
DEFAULT_TEMPERATURE, DEFAULT_ALPHA, DEFAULT_LAYERS, DEFAULT_SPARSITY = 2.0, 0.5, 2, 0.5
_LOCK = threading.Lock()


def base_location() -> Path:
    """The packaged MiniLM the teacher is fine-tuned from (the default run is keyed on it)."""
    try:
        return compress_builder.base_location()
    except FileNotFoundError as exc:
        raise InputError(f"The chapter 8 benchmark needs {exc}.") from exc


def default_folder() -> Path:
    folder = compress_builder.cached(base_location())
    if folder is None:
        raise InputError("The chapter 8 benchmark's default run is not built on this server yet; it is built at "
                         "set-up: run `python -m backend.hub build` (make run does it), then reload.")
    return folder


def _settings(temperature, alpha, layers, sparsity, epochs=None) -> compress_run.Settings:
    t = as_float("temperature", temperature, lo=0.5, hi=20.0)
    a = as_float("alpha", alpha, lo=0.0, hi=1.0)
    n = as_int("layers", layers, lo=1, hi=5)
    s = as_float("sparsity", sparsity, lo=0.05, hi=0.95)
    e = LIVE_EPOCHS if epochs in (None, "") else as_int("epochs", epochs, lo=1, hi=6)
    return compress_run.Settings(temperatures=(round(t, 3),), alphas=(round(a, 3),), layers=distill.spread_layers(n),
                                 epochs=e, learning_rate=compress_builder.DEFAULT.learning_rate,
                                 sparsities=(round(s, 2),), latency_runs=LIVE_LATENCY_RUNS)


def run_id(settings: compress_run.Settings) -> str:
    """This address's run with these settings: unguessable for anyone else (backend/efficiency/compress/live.py)."""
    return live_runs.run_id(settings, config.get_settings().cache_dir / LIVE_DIR)


def run_folder(rid: str) -> tuple[Path, Path]:
    """(teacher folder, run folder) of a run id: "default" or a live run's id."""
    base = default_folder()
    if rid == "default":
        return base / compress_builder.TEACHER_DIR, base / compress_builder.RUN_DIR
    if not (isinstance(rid, str) and len(rid) == 16 and all(c in "0123456789abcdef" for c in rid)):
        raise InputError("run_id must be 'default' or the run_id a /compress call returned.")
    folder = config.get_settings().cache_dir / LIVE_DIR / rid
    if not (folder / compress_run.STATE_FILE).exists() or not live_runs.owned(folder):
        raise InputError("That run is gone from this server's cache (it keeps the last few); run /compress again.")
    return base / compress_builder.TEACHER_DIR, folder


def _visible(raw: dict, through: str) -> dict:
    """The run as it stood after step `through` (the default run, shown step by step)."""
    if through == "all":
        return raw
    steps = compress_run.STEPS[:compress_run.STEPS.index(through) + 1] if through != "teacher" else ()
    keep = {"teacher"}
    keep |= {"student"} if "distil" in steps else set()
    keep |= {"student_int8"} if "quantize" in steps else set()
    keep |= {"student_onnx"} if "onnx" in steps else set()
    keep |= {"student_onnx_int8"} if "onnx_int8" in steps else set()
    rows = [r for r in raw["rows"] if r["name"] in keep or (r["name"].startswith("pruned_") and "prune" in steps)]
    return {**raw, "rows": rows, "done": [s for s in raw["done"] if s in steps],
            "facts": {k: v for k, v in raw["facts"].items() if k in steps}}


def _shape(raw: dict, rid: str, source: str, seconds: float) -> dict:
    ds = datasets.load_shipped(compress_builder.DATASET)
    texts = [t for t, _ in ds.test]
    table = report.rows(raw)
    curve = report.pruning_curve(raw)
    agree = report.disagreements(raw, texts, raw["labels"])
    distil = raw["facts"].get("distil")
    return {"run_id": rid, "source": source, "rows": table, "pruning": curve, "disagreements": agree,
            "search": distil["trials"] if distil else [], "chosen": distil["chosen"] if distil else None,
            "targets": report.targets(table), "notices": report.notices(table, curve, agree),
            "claims": {"fastest": claims.fastest(table), "accuracy": claims.accuracy_changes(table)},
            "steps_done": raw["done"], "settings": raw["settings"], "query": raw["query"],
            "test_size": raw["test_size"], "threads": raw["threads"], "timings": raw["timings"],
            "facts": {k: v for k, v in raw["facts"].items() if k != "distil"},
            "model": raw.get("teacher") or compress_builder.results(default_folder()).get("teacher"),
            "seconds": round(seconds, 2)}


def controls_of(raw: dict) -> dict:
    """The settings a run used, as the page's controls hold them: the temperature and alpha its search chose
    (the grid's first where it chose none), its student's layers, its largest sparsity, its epochs."""
    settings = raw.get("settings") or {}
    chosen = (raw.get("facts", {}).get("distil") or {}).get("chosen") or {}
    return {"temperature": chosen.get("temperature", (settings.get("temperatures") or [DEFAULT_TEMPERATURE])[0]),
            "alpha": chosen.get("alpha", (settings.get("alphas") or [DEFAULT_ALPHA])[0]),
            "layers": len(settings.get("layers") or []) or DEFAULT_LAYERS,
            "sparsity": max(settings.get("sparsities") or [DEFAULT_SPARSITY]),
            "sparsities": list(settings.get("sparsities") or []), "epochs": settings.get("epochs", LIVE_EPOCHS)}


def default_run(through: str = "all", start: float | None = None) -> dict:
    """The default run built at set-up, as it stood after step `through`, shaped as /compress returns it, with
    the settings it used (`controls`). No model work: it is read from its results file (InputError when the
    run is not built yet)."""
    start = time.perf_counter() if start is None else start
    raw = compress_builder.results(default_folder())
    return {**_shape(_visible(raw, through), "default", "built at set-up", time.perf_counter() - start),
            "controls": controls_of(raw)}


@gpu_task(duration=240)
def compress(run="default", temperature=DEFAULT_TEMPERATURE, alpha=DEFAULT_ALPHA, layers=DEFAULT_LAYERS,
             sparsity=DEFAULT_SPARSITY, through="all", epochs=LIVE_EPOCHS, progress=None) -> dict:
    """`/compress`: the chapter 8 benchmark. run="default": the run built at set-up, as it stood
    after step `through` (teacher, distil, quantize, onnx, onnx_int8, prune, all). run="custom":
    the learner's temperature (0.5-20), alpha (0-1), student layers (1-5 of 6) and sparsity
    (0.05-0.95) and distillation epochs (1-6), run live through `through` from the cached teacher,
    continuing a run with the same settings where it stopped. Returns rows (accuracy, latency mean/std, size, ratios),
    pruning, disagreements, search, targets (each "met", "not met" or "cannot tell", with why), claims (the
    fastest variant, or None with why; each variant's accuracy change and whether it is within noise),
    notices, timings, model, run_id."""
    start = time.perf_counter()
    run = one_of("run", run, RUNS, default="default")
    through = one_of("through", through, THROUGH, default="all")
    settings = _settings(temperature, alpha, layers, sparsity, epochs)  # checked whichever run is shown
    folder = default_folder()
    if run == "default":
        return default_run(through, start)
    say = progress or (lambda *_: None)
    say(0.0, "Loading the fine-tuned baseline (the teacher) and the emotion set")
    rid = run_id(settings)
    live = config.get_settings().cache_dir / LIVE_DIR / rid
    ds = datasets.load_shipped(compress_builder.DATASET)
    labels = [l.upper() for l in ds.labels]
    last = compress_run.STEPS[-1] if through == "all" else through
    with _LOCK:  # one live run at a time: two would halve each other's latencies
        live.parent.mkdir(parents=True, exist_ok=True)
        live_runs.make_room(live.parent, live)
        live_runs.claim(live)
        teacher, tokenizer, _ = finetune.load_folder(folder / compress_builder.TEACHER_DIR)
        with budget.scope():
            if last == "teacher":
                last = None
            raw = compress_run.run(teacher, tokenizer, labels, ds, folder / compress_builder.TEACHER_DIR, live,
                                   settings, through=last, check=lambda: budget.check(
                                       "each finished step is kept, so running again continues from there",
                                       "choose fewer student layers or run one step at a time"),
                                   progress=progress or (lambda *_: None))
    return _shape(raw, rid, "run live with your settings", time.perf_counter() - start)
