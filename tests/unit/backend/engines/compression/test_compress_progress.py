"""A live chapter 8 run says what it is doing from its first second (a custom run sat on "processing |
31.6/0.7s" while the teacher labelled the training set): the teacher's soft labels batch by batch, then each
distillation step with the training time left, each message advancing the bar."""

from __future__ import annotations

from backend.engines.compression import pipeline as compress_run
from backend.engines.classify import finetune
from tests.helpers.tiny_models import minilm_tokenizer
from tests.helpers.compress_models import tiny_teacher, tiny_dataset


def test_a_live_run_reports_the_soft_labels_and_each_step_with_the_time_left(tmp_path):
    tok = minilm_tokenizer()
    ds = tiny_dataset(n_train=130, n_eval=8)
    labels = [l.upper() for l in ds.labels]
    teacher = tiny_teacher(layers=2)
    finetune.save_folder(tmp_path / "teacher", teacher.encoder, teacher.state_dict(), tok, labels)
    said: list[tuple[float, str]] = []
    checks: list[int] = []
    settings = compress_run.Settings(temperatures=(2.0,), alphas=(0.5,), layers=(0,), epochs=1, latency_runs=2)
    compress_run.run(teacher, tok, labels, ds, tmp_path / "teacher", tmp_path / "run", settings, through="distil",
                     check=lambda: checks.append(1), progress=lambda f, d: said.append((f, d)))
    texts = [d for _, d in said]
    soft = [d for d in texts if "soft labels" in d]
    steps = [d for d in texts if "trial 1 of 1" in d]
    assert soft and soft[-1].endswith("130 of 130 training sentences") and len(soft) == 4  # 0, 64, 128, 130: batch by batch
    assert texts.index(soft[0]) < texts.index(steps[0])  # the teacher's pass is announced, not silent
    assert any("s of training left" in d for d in steps)
    fractions = [f for f, _ in said]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0  # the bar only moves forward
    assert len(checks) >= len(soft) + len(steps) - 1  # a Stop is honoured between batches and steps
