"""Benchmark: the book's chapter 8 path on the project's emotion classifier, measured in one run.

The default run built at set-up (backend/hub/compress_builder.py: MiniLM fine-tuned on the
six-emotion set, a 2-of-6-layer student (first and last) distilled with a 2 x 2 grid over T and alpha, torch
int8, ONNX Runtime, ONNX Runtime int8, pruning) is loaded from the cache, and every variant is
measured again here, in this one process, with more latency runs: accuracy on the 95 test
sentences, latency of one query at batch 1 (tokenisation included; calls interleaved round
by round so a busy machine slows all alike), size of the saved files. Ratios are against the
fine-tuned baseline, which is the plain transformers forward of that model.

Targets: the student keeps >= 95% of the baseline's accuracy at < 0.5x its latency;
ONNX Runtime + int8 >= 3x faster than the baseline, accuracy loss stated.

    .venv/bin/python bench/compress.py            # ~1 min once the cache is built (make run)
    .venv/bin/python bench/compress.py --threads 1
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")

import torch  # noqa: E402

from backend.efficiency.compress import report  # noqa: E402
from backend.engines.compression import pipeline as compress_run, perf_bench  # noqa: E402
from backend.engines.classify import datasets, finetune  # noqa: E402
from backend.hub import compress_builder  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "compress.md"
BOOK = ("The book (BERT-base baseline on CLINC150, DistilBERT student, a desktop CPU) reports the distilled "
        "student about 2x faster than the baseline at about the same accuracy, and quantization / ONNX Runtime "
        "with quantization several times faster still, with files several times smaller (exact figures: the book, chapter 8).")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=300, help="timed calls per variant")
    ap.add_argument("--threads", type=int, default=0, help="torch and ORT threads (0: torch's default)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    folder = compress_builder.cached(compress_builder.base_location())
    if folder is None:
        print("The default run is not built: run `python -m backend.hub build` (make run does).")
        return 1
    built = compress_builder.results(folder)
    teacher_dir, run_dir = folder / compress_builder.TEACHER_DIR, folder / compress_builder.RUN_DIR
    _, tokenizer, _ = finetune.load_folder(teacher_dir)
    keys = ["teacher", "student", "student_int8", "student_onnx", "student_onnx_int8"] + \
        [f"pruned_{round(100 * p['sparsity'])}" for p in built["facts"]["prune"]["pruned"]]
    files = {r["name"]: r["files"] for r in built["rows"]}

    def paths(key):
        base = teacher_dir if key == "teacher" else run_dir / compress_run.STUDENT_DIR if key == "student" else \
            run_dir / f"pruned-{key[7:]}" if key.startswith("pruned_") else run_dir
        return [base / f for f in files[key]]

    variants = [perf_bench.Variant(k, compress_run.load_variant(k, tokenizer, teacher_dir, run_dir), paths(k))
                for k in keys]
    ds = datasets.load_shipped(compress_builder.DATASET)
    texts, ys = [t for t, _ in ds.test], [y for _, y in ds.test]
    query = sorted(texts, key=len)[len(texts) // 2]
    t0 = time.perf_counter()
    rows = perf_bench.run(variants, texts, ys, query, runs=args.runs, warmup=10)
    raw = {**built, "rows": rows}
    table = report.rows(raw)
    curve = report.pruning_curve(raw)
    agree = report.disagreements(raw, texts, built["labels"])
    targets = report.targets(table)
    text = render(table, curve, agree, targets, built, query, args, time.perf_counter() - t0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


def render(table, curve, agree, targets, built, query, args, seconds) -> str:
    s, o = targets["student"], targets["onnx_int8"]
    lines = [
        "# Chapter 8: distillation, quantization, ONNX Runtime, pruning (bench/compress.py)", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {torch.get_num_threads()} torch/ORT thread(s), "
        f"torch {torch.__version__}; {time.strftime('%Y-%m-%d %H:%M')}. {args.runs} timed calls per variant on one "
        f"query ({len(query.split())} words: \"{query}\"), interleaved; accuracy on {len(built['test_labels'])} test "
        f"sentences; this measurement took {seconds:.0f} s.", "",
        "| variant | accuracy | latency ms (mean ± std) | speed-up vs baseline | size MB | size vs baseline |",
        "|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['variant']} | {100 * r['accuracy']:.1f}% | {r['latency_ms_mean']:.2f} ± "
                     f"{r['latency_ms_std']:.2f} | {r['speedup_vs_baseline']:.2f}x | {r['size_mb']:.1f} | "
                     f"{r['size_vs_baseline']:.2f}x |")
    lines += ["", "## Targets", "",
              f"- Student keeps {100 * s['accuracy_kept']:.1f}% of the baseline's accuracy at {s['latency_ratio']:.2f}x its "
              f"latency (target >= 95% at < 0.5x): **{'met' if s['met'] else 'NOT met'}**.",
              f"- ONNX Runtime int8: {o['speedup']:.2f}x faster than the baseline (target >= 3x: "
              f"**{'met' if o['met'] else 'NOT met'}**); accuracy {abs(100 * o['accuracy_loss']):.1f} points "
              f"{'below' if o['accuracy_loss'] >= 0 else 'above'} the baseline's.", "", "## Beside the book", "", BOOK, ""]
    lines += ["## ONNX and int8 against the PyTorch student (test split)", ""]
    lines += [f"- {report.label_of(k)}: {d['of'] - d['differ']} of {d['of']} predictions equal" for k, d in agree.items()]
    lines += ["", "## Pruning (magnitude, global over the encoder's Linear weights, no retraining)", "",
              "| zeros | accuracy | latency ms | file MB (dense) | file MB deflated |", "|---|---|---|---|---|"]
    lines += [f"| {100 * c['sparsity']:.0f}% | {100 * c['accuracy']:.1f}% | {c['latency_ms_mean']:.2f} | "
              f"{c['size_mb']:.1f} | {c['compressed_mb']:.1f} |" for c in curve]
    c = built["facts"]["distil"]
    lines += ["", "## The default run as built at set-up", "",
              f"Build timings (s): {built['timings']}.",
              "Distillation grid (validation accuracy): " + ", ".join(
                  f"T={t['temperature']:g}/alpha={t['alpha']:g}: {100 * t['val_accuracy']:.1f}%" for t in c["trials"])
              + f"; chosen T={c['chosen']['temperature']:g}, alpha={c['chosen']['alpha']:g}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
