"""The chapter 8 pipeline's model-level pieces on tiny random BERTs (real MiniLM tokenizer):
the distillation loss against a hand computation, the student's layers, ONNX export and ONNX
Runtime against PyTorch, pruning, the benchmark (a planted slow variant shows up), and the whole
pipeline in a temp folder (resumable, ONNX predictions equal to the student's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.efficiency.compress import report
from backend.engines.compression import pipeline as compress_run, distill, onnx_ort, perf_bench, prune
from backend.engines.classify import datasets, finetune
from tests.tiny_models import minilm_tokenizer, tiny_bert


def _teacher(layers=4, labels=6, seed=0):
    return finetune.EncoderClassifier(tiny_bert(num_hidden_layers=layers, seed=seed), labels).eval()


def test_distillation_loss_matches_hand_computation():
    s = np.array([[1.0, -0.5, 2.0], [0.3, 0.2, -1.0]])
    t = np.array([[0.5, 0.0, 3.0], [2.0, -1.0, 0.0]])
    y = np.array([2, 0])
    temp, alpha = 2.5, 0.3

    def softmax(x):
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    ce = -np.mean(np.log(softmax(s)[np.arange(2), y]))
    p_t, p_s = softmax(t / temp), softmax(s / temp)
    kl = np.sum(p_t * (np.log(p_t) - np.log(p_s))) / 2  # batchmean
    want = alpha * ce + (1 - alpha) * temp ** 2 * kl
    got = distill.distillation_loss(torch.tensor(s), torch.tensor(t), torch.tensor(y), temp, alpha)
    assert math.isclose(float(got), want, rel_tol=1e-9)
    # alpha = 1 is plain cross-entropy; identical logits give zero KL
    assert math.isclose(float(distill.distillation_loss(torch.tensor(s), torch.tensor(t), torch.tensor(y), temp, 1.0)),
                        ce, rel_tol=1e-9)
    same = distill.distillation_loss(torch.tensor(s), torch.tensor(s), torch.tensor(y), temp, 0.0)
    assert abs(float(same)) < 1e-12


def test_student_keeps_the_chosen_teacher_layers():
    teacher = _teacher(layers=4)
    student = distill.student_from(teacher, [0, 3])
    assert len(student.encoder.encoder.layer) == 2 and student.encoder.config.num_hidden_layers == 2
    assert teacher.encoder.config.num_hidden_layers == 4  # untouched
    for i, j in ((0, 0), (1, 3)):
        a = student.encoder.encoder.layer[i].state_dict()
        b = teacher.encoder.encoder.layer[j].state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert torch.equal(student.head.weight, teacher.head.weight)
    with pytest.raises(ValueError):
        distill.student_from(teacher, [0, 4])


def test_onnx_export_and_onnx_runtime_give_the_same_logits(tmp_path):
    tok = minilm_tokenizer()
    model = _teacher(layers=2)
    path = onnx_ort.export(model, tok, tmp_path / "m.onnx")
    predict = onnx_ort.predictor(onnx_ort.session(path), tok)
    texts = ["short", "a much longer sentence, with punctuation, to make the batch pad the first one"]
    want = compress_run.torch_predictor(model, tok)(texts)
    got = predict(texts)
    assert np.abs(got - want).max() < 1e-4
    q = onnx_ort.quantize(path, tmp_path / "q.onnx")
    assert q.stat().st_size < 0.5 * path.stat().st_size  # int8 weights, measured from the files
    assert np.abs(onnx_ort.predictor(onnx_ort.session(q), tok)(texts) - want).max() < 0.5


def test_pruning_zeroes_weights_but_not_bytes(tmp_path):
    model = _teacher(layers=2)
    pruned = prune.pruned_copy(model, 0.7)
    assert prune.sparsity_of(model) < 0.01
    assert abs(prune.sparsity_of(pruned) - 0.7) < 0.01
    assert not any(n.endswith("_orig") or n.endswith("_mask") for n in pruned.state_dict())  # made permanent
    finetune.save_folder(tmp_path / "a", model.encoder, model.state_dict(), minilm_tokenizer(), list("abcdef"))
    finetune.save_folder(tmp_path / "b", pruned.encoder, pruned.state_dict(), minilm_tokenizer(), list("abcdef"))
    a, b = tmp_path / "a" / "model.safetensors", tmp_path / "b" / "model.safetensors"
    assert a.stat().st_size == b.stat().st_size  # a dense file does not shrink
    assert prune.compressed_mb(b) < prune.compressed_mb(a)  # zeros deflate


def test_pruning_finds_an_encoder_nested_under_a_head():
    class Wrapped(torch.nn.Module):  # the sentiment classifier's shape: the encoder one level down
        def __init__(self, inner):
            super().__init__()
            self.classifier = inner

    model = Wrapped(_teacher(layers=2))
    assert len(prune.encoder_linears(model)) == len(prune.encoder_linears(model.classifier)) > 0
    assert abs(prune.sparsity_of(prune.pruned_copy(model, 0.5)) - 0.5) < 0.01


def _planted_rows(clock, fast_s: float, slow_s: float):
    """A teacher and a slower student, timed on `clock` (perf_bench's own, moved only by these calls)."""
    def predict(seconds, row):
        def call(texts):
            clock.sleep(seconds)
            return np.tile([row], (len(texts), 1))
        return call

    fast = perf_bench.Variant("teacher", predict(fast_s, [0.0, 1.0]))
    slow = perf_bench.Variant("student", predict(slow_s, [1.0, 0.0]))
    rows = perf_bench.run([fast, slow], ["a", "b", "c"], [1, 1, 0], "a", runs=12, warmup=1)
    return {"rows": rows, "facts": {}, "labels": ["x", "y"]}


def test_a_planted_slower_variant_shows_in_the_table_and_notices(monkeypatch):
    from tests.virtual_clock import installed

    raw = _planted_rows(installed(monkeypatch, perf_bench), 0.001, 0.01)
    table = report.rows(raw)
    by = {r["key"]: r for r in table}
    assert by["student"]["latency_ms_mean"] == pytest.approx(10.0) and by["teacher"]["latency_ms_mean"] == pytest.approx(1.0)
    assert by["student"]["speedup_vs_baseline"] == pytest.approx(0.1, abs=0.01)
    assert by["teacher"]["accuracy"] == pytest.approx(2 / 3, abs=1e-4) and by["student"]["accuracy"] == pytest.approx(1 / 3, abs=1e-4)
    assert by["student"]["latency_runs"] == 12
    assert not any(line.startswith("Fastest") for line in report.notices(table, [], {}))  # the baseline is fastest
    assert report.targets(table)["student"]["met"] is False


def _tiny_dataset(n_train=24, n_eval=12) -> datasets.Dataset:
    ds = datasets.load_shipped("emotion")
    return datasets.Dataset("emotion", ds.labels, ds.train[:n_train], ds.validation[:n_eval], ds.test[:n_eval])


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("compress")
    tok = minilm_tokenizer()
    teacher = _teacher(layers=4)
    ds = _tiny_dataset()
    labels = [l.upper() for l in ds.labels]
    finetune.save_folder(root / "teacher", teacher.encoder, teacher.state_dict(), tok, labels)
    teacher, _, _ = finetune.load_folder(root / "teacher")
    settings = compress_run.Settings(temperatures=(1.0, 3.0), alphas=(0.5,), layers=(0, 2), epochs=1,
                                     sparsities=(0.5, 0.9), latency_runs=5)
    first = compress_run.run(teacher, tok, labels, ds, root / "teacher", root / "run", settings, through="distil")
    whole = compress_run.run(teacher, tok, labels, ds, root / "teacher", root / "run", settings)
    return first, whole, ds


def test_the_pipeline_runs_in_steps_and_continues_where_it_stopped(tiny_run):
    first, whole, _ = tiny_run
    assert first["done"] == ["distil"] and [r["name"] for r in first["rows"]] == ["teacher", "student"]
    assert whole["done"] == list(compress_run.STEPS)
    assert whole["timings"]["distil"] == first["timings"]["distil"]  # not distilled again
    assert [r["name"] for r in whole["rows"]] == ["teacher", "student", "student_int8", "student_onnx",
                                                  "student_onnx_int8", "pruned_50", "pruned_90"]
    assert len(whole["facts"]["distil"]["trials"]) == 2


def test_the_pipeline_measures_every_variant_from_its_files(tiny_run):
    _, whole, ds = tiny_run
    by = {r["name"]: r for r in whole["rows"]}
    assert by["student_onnx_int8"]["size_mb"] < by["student_onnx"]["size_mb"]
    assert by["student_int8"]["size_mb"] < by["student"]["size_mb"]
    assert by["pruned_90"]["size_mb"] == pytest.approx(by["student"]["size_mb"], rel=1e-3)
    assert all(r["latency_runs"] == 5 and r["latency_ms_mean"] > 0 for r in whole["rows"])
    agree = report.disagreements(whole, [t for t, _ in ds.test], whole["labels"])
    assert agree["student_onnx"]["differ"] == 0  # ONNX Runtime predicts what PyTorch does
    curve = report.pruning_curve(whole)
    assert [round(c["sparsity"], 1) for c in curve] == [0.0, 0.5, 0.9]
    assert curve[-1]["compressed_mb"] < curve[0]["compressed_mb"]
