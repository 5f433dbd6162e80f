"""The Train tab's "The same in Python" (/train): one block per method that ran, the run's settings
(read from its result: the budget, fine-tuning's examples and steps), the data it read (a shipped set from a
checkout, an upload by its file name, its delimiter, columns and splits), never the app imported. That the
snippet gives the run's numbers back is tests/integration/test_snippets_train.py's."""

from __future__ import annotations

from backend import snippets
from backend.runtime import config

EMBEDDER = {"role": "embedder", "checkpoint": config.LOCAL["embedder"].checkpoint,
            "source": "package", "method": "model"}
SIZES = {"train": 380, "validation": 82, "test": 82}
BUDGET = {"epochs": 3, "max_examples": 2000, "max_seconds": 60.0, "learning_rate": 1e-4, "batch_size": 16, "seed": 0}
FT = {"stopped": "finished", "steps": 72, "total_steps": 72, "examples": 380}


def _result(methods=("zero_shot", "probe", "finetune"), source="shipped", name="sentiment", notices=(), ft=None,
            **budget) -> dict:
    per = {"zero_shot": {"accuracy": 0.5, "template": "This text is about {}."}, "probe": {"accuracy": 0.9},
           "finetune": {**FT, **(ft or {}), "accuracy": 0.8}}
    return {"dataset": {"name": name, "source": source, "labels": ["negative", "neutral", "positive"],
                        "sizes": SIZES, "notices": list(notices)},
            "methods": {m: per[m] for m in methods}, "model": EMBEDDER, "budget": {**BUDGET, **budget}}


def _python(result: dict, inputs: dict | None = None) -> str:
    python = snippets.for_result("train", inputs or {"dataset": result["dataset"]["name"]}, result)["python"]
    compile(python, "train_snippet", "exec")
    return python


def test_train_belongs_to_chapter_2_and_writes_every_method_that_ran():
    assert snippets.FAMILIES["train"][1] == 2
    python = _python(_result())
    assert "backend" not in python  # runs in a fresh interpreter, the app not importable
    assert 'open(f"assets/data/sentiment/{split}.jsonl"' in python and "labels = ['negative', 'neutral', 'positive']" in python
    assert "'This text is about {}.'.format(label)" in python and "/ 0.05)" in python
    assert "sklearn's LogisticRegression(C=1.0)" in python and "torch.optim.LBFGS" in python
    assert "torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)" in python
    assert "lr, epochs, batch_size, seed = 0.0001, 3, 16, 0" in python
    assert "torch.manual_seed(seed * 100_003 + step)" in python and "random.Random(seed * 1000 + epoch)" in python
    assert python.count("# What the app adds:") == 1
    assert "rng.sample" not in python and "ft_train = train" in python  # max_examples cut nothing
    assert "for step, batch in enumerate(batches):" in python


def test_only_the_methods_that_ran_are_written():
    probe = _python(_result(methods=("probe",)))
    assert "LBFGS" in probe and "class Classifier" not in probe and "descriptions" not in probe
    assert "import copy" not in probe and "import random" not in probe
    zero = _python(_result(methods=("zero_shot",)))
    assert "descriptions" in zero and "LBFGS" not in zero and "AdamW" not in zero


def test_the_run_settings_capped_examples_and_a_cut_run_are_the_runs_own():
    python = _python(_result(methods=("finetune",), ft={"examples": 99, "steps": 5, "total_steps": 21}, epochs=2,
                             max_examples=100, learning_rate=3e-5, batch_size=8, seed=7))
    assert "lr, epochs, batch_size, seed = 3e-05, 2, 8, 7" in python
    assert "rng, per_label = random.Random(7), max(1, 100 // len(labels))" in python
    assert "ft_train = [train[i] for i in sorted(keep)][:100]" in python
    assert "for step, batch in enumerate(batches[:5]):" in python and "after 5 of its 21 steps" in python
    assert "step / max(1, len(batches))" in python  # the decay still spans the whole planned run


def test_an_upload_is_read_by_its_name_with_the_apps_delimiter_columns_and_splits():
    notices = ["Columns read as separated by semicolons (detected from the file).",
               "Splits taken from the file's 'split' column."]
    inputs = {"dataset": "upload", "file": "/tmp/gradio/abc123/my reviews.csv", "text_column": "body ",
              "label_column": ""}
    python = _python(_result(source="upload", name="my reviews.csv", notices=notices), inputs)
    assert "open('my reviews.csv'" in python and "/tmp/gradio" not in python
    assert "delimiter=';'" in python and "text_col = 'body'" in python
    assert "label_col = next(lower[g] for g in ('label'," in python
    assert "split_col" in python and "0.15" not in python
    jsonl = _python(_result(source="upload", name="rows.jsonl"), {"dataset": "upload", "file": "rows.jsonl"})
    assert "json.loads(line)" in jsonl and "csv" not in jsonl
    assert 'random.Random(f"0-{label}")' in jsonl and "round(len(items) * 0.15)" in jsonl  # the app's 70/15/15
    named = _python(_result(source="upload", name="rows.jsonl"), {"dataset": "upload", "file": {"path": "/tmp/x/a.jsonl"}})
    assert "open('rows.jsonl'" in named  # no path: the app's own name for the upload
    client = snippets.for_result("train", inputs, _result(source="upload"))["client"]
    assert "handle_file('my reviews.csv')" in client and "api_name='/train'" in client
