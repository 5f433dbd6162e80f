"""The chapter 8 benchmark's default run, from the cache (`python -m backend.hub build` makes
it; built here if it is missing): the ONNX Runtime student against the PyTorch student on the
whole test split, int8 sizes from the files, and the tab's backend reading the run."""

from __future__ import annotations

import numpy as np
import pytest

from backend import hub

from backend.efficiency import compress
from backend.efficiency.compress import report
from backend.engines.compression import pipeline as compress_run
from backend.engines.classify import datasets, finetune
from backend.hub import compress_builder


@pytest.fixture(scope="module")
def run():
    folder, _ = compress_builder.ensure(hub.load("embedder"), compress_builder.base_location())
    return folder, compress_builder.results(folder)


@pytest.fixture(scope="module")
def test_texts():
    return [t for t, _ in datasets.load_shipped("emotion").test]


def _logits(folder, key, texts):
    teacher_dir, run_dir = folder / compress_builder.TEACHER_DIR, folder / compress_builder.RUN_DIR
    _, tok, _ = finetune.load_folder(teacher_dir)
    predict = compress_run.load_variant(key, tok, teacher_dir, run_dir)
    return np.concatenate([predict(texts[i:i + 16]) for i in range(0, len(texts), 16)])


def test_onnx_runtime_predicts_what_the_pytorch_student_does(run, test_texts):
    folder, results = run
    torch_logits = _logits(folder, "student", test_texts)
    onnx_logits = _logits(folder, "student_onnx", test_texts)
    assert np.abs(torch_logits - onnx_logits).max() < 1e-3
    assert (torch_logits.argmax(1) == onnx_logits.argmax(1)).all()
    agree = report.disagreements(results, test_texts, results["labels"])
    assert agree["student_onnx"]["differ"] == 0
    # the int8 graph may differ; what the run counted is what a fresh pass finds
    q = _logits(folder, "student_onnx_int8", test_texts).argmax(1)
    assert agree["student_onnx_int8"]["differ"] == int((q != torch_logits.argmax(1)).sum())


def test_the_default_run_is_whole_and_its_sizes_are_its_files(run):
    folder, results = run
    by = {r["name"]: r for r in results["rows"]}
    assert list(by)[:5] == ["teacher", "student", "student_int8", "student_onnx", "student_onnx_int8"]
    run_dir = folder / compress_builder.RUN_DIR
    onnx_mb = (run_dir / compress_run.ONNX_FILE).stat().st_size / 2 ** 20
    int8_mb = (run_dir / compress_run.ONNX_INT8_FILE).stat().st_size / 2 ** 20
    assert by["student_onnx"]["size_mb"] == pytest.approx(onnx_mb, abs=1e-3)
    assert by["student_onnx_int8"]["size_mb"] == pytest.approx(int8_mb, abs=1e-3)
    assert int8_mb < 0.5 * onnx_mb
    assert by["teacher"]["accuracy"] > 0.6  # six classes: chance is ~0.17
    assert by["student"]["accuracy"] >= 0.8 * by["teacher"]["accuracy"]
    assert len(results["facts"]["distil"]["trials"]) == len(compress_builder.DEFAULT.temperatures) * len(
        compress_builder.DEFAULT.alphas)


def test_the_tab_reads_the_default_run_step_by_step(run):
    first = compress.compress("default", through="teacher")
    assert [r["key"] for r in first["rows"]] == ["teacher"] and first["pruning"] == []
    two = compress.compress("default", through="distil")
    assert [r["key"] for r in two["rows"]] == ["teacher", "student"] and "student" in two["targets"]
    whole = compress.compress("default")
    assert whole["rows"][0]["latency_ms_mean"] == run[1]["rows"][0]["latency_ms_mean"]  # the run's own numbers
    assert whole["notices"] and len(whole["pruning"]) == 1 + len(compress_builder.DEFAULT.sparsities)
    p = compress.compress_predict("I was terrified when the lights went out.")
    assert [v["key"] for v in p["variants"]][:5] == [r["key"] for r in whole["rows"]][:5]
    assert p["baseline_label"] in run[1]["labels"]
