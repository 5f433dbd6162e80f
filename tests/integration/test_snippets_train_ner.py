"""The Train tab's NER snippet is true (issue #52): /train_ner runs here, in-process, on the local profile (a
small run: a seeded sample of 48 shipped train sentences, three epochs; and an uploaded CoNLL file, split
70/15/15 by the app); its "The same in Python" snippet, plain transformers + torch, then runs in ONE fresh offline
interpreter (test_snippets_reproduce's DRIVER: the repository not on sys.path, each case in its own namespace
and with its own model) and must tag every test sentence as the app did, word for word, and give the same
per-type scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

import pytest

from backend import snippets
from backend.engines.ner import data as ner_data
from backend.engines.ner.token_classification import Recipe
from backend.runtime import budget as request_budget
from backend.snippets import train_ner
from backend.train import ner_api
from tests.integration.test_snippets_reproduce import DRIVER, REPO

TAKE = {"predicted": "predicted", "scores": "scores", "train": "len(train)", "steps": "step + 1",
        "test": "[s['tokens'] for s in test]"}
# Three epochs of six batches: enough to tag entities (the best validation epoch was the second here, so the
# snippet's loop stops at step 12 of 18: the kept weights); word shapes on, as the tab's default.
SHIPPED = {"source": "shipped", "file": None, "epochs": 3, "max_sentences": 48, "learning_rate": 0.001,
           "batch_size": 8, "word_shapes": True, "seed": 3}
UPLOAD_SENTENCES = 36  # split 5 / 5 / 26 by the app: two steps of 16 (too few to tag entities: the data is compared)


def _conll(sentences) -> str:
    return "\n\n".join("\n".join(f"{w} {t}" for w, t in zip(s.tokens, s.tags)) for s in sentences) + "\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(name, inputs, result, cwd): the shipped set with word shapes, an upload (CoNLL) without them."""
    folder = tmp_path_factory.mktemp("ner_upload")
    upload = folder / "my_entities.conll"
    upload.write_text(_conll(ner_data.load_shipped().train[-UPLOAD_SENTENCES:]), encoding="utf-8")
    uploaded = {**SHIPPED, "source": "upload", "file": str(upload), "max_sentences": 0, "learning_rate": 0.001,
                "word_shapes": False, "seed": 0}
    made = []
    with request_budget.scope(600):  # generous: the plan fits and nothing is cut
        for name, inputs, cwd in (("shipped", SHIPPED, REPO), ("upload", uploaded, str(folder))):
            result = ner_api.train(f"snippet-ner-{name}", **inputs)
            assert not result["stopped"] and result["steps"] == result["total_steps"], name
            made.append((name, inputs, result, cwd))
    return made


@pytest.fixture(scope="module")
def reproduced(runs, tmp_path_factory):
    cases = [{"name": name, "python": snippets.for_result("train_ner", inputs, result)["python"], "take": TAKE,
              "cwd": cwd, "changes_model": True} for name, inputs, result, cwd in runs]
    path = tmp_path_factory.mktemp("snippets_ner") / "cases.json"
    path.write_text(json.dumps(cases))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(path)], capture_output=True, text=True, env=env,
                          timeout=300, cwd="/")  # not the repository: the snippet may not import the app
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_train_ner_snippets_tag_the_test_split_as_the_run_did_and_score_it_the_same(runs, reproduced):
    for name, _, result, _ in runs:
        got = reproduced[name]
        assert got["train"] == result["train_sentences"] and got["steps"] == result["best_step"], name
        preds = result["predictions"]["test"]
        assert got["test"] == [p["tokens"] for p in preds], name  # the same test split (an upload: split alike)
        assert got["predicted"] == [p["pred"] for p in preds], name
        if name == "shipped":  # it learned to tag entities: a comparison of more than "O" everywhere
            assert sum(t != "O" for p in preds for t in p["pred"]) > 50 and result["test"]["overall"]["f1"] > 0.2
        theirs = result["test"]["per_type"]
        assert set(got["scores"]) == set(theirs) and theirs, name
        for t, row in theirs.items():
            for key in ("precision", "recall", "f1"):
                assert abs(got["scores"][t][key] - row[key]) < 1e-4, (name, t, key, got["scores"][t][key], row[key])
            assert got["scores"][t]["support"] == row["support"], (name, t)


def test_the_snippet_stops_at_the_kept_epoch_and_names_only_what_the_run_used(runs):
    """A run whose best validation epoch came before its last: the same schedule, stopped at the kept step; the
    upload is read by its own name, never the server's copy; word shapes only where the run used them."""
    (name, inputs, result, _), (_, up_inputs, up_result, _) = runs
    python = snippets.for_result("train_ner", inputs, {**result, "best_step": 2, "total_steps": 6})["python"]
    assert "steps = 2  # the app kept the weights after step 2 of 6" in python and "batches[:steps]" in python
    assert "import backend" not in python and "from backend" not in python
    assert len([l for l in python.splitlines() if l.startswith("# What the app adds:")]) == 1
    assert "random.Random(\"ner-slice-3\").sample(train, 48)" in python and "word_shape(" in python
    upload = snippets.for_result("train_ner", up_inputs, up_result)["python"]
    assert "open('my_entities.conll'" in upload and str(up_inputs["file"]) not in upload
    assert "word_shape" not in upload and "sample(train" not in upload and "batches[:steps]" not in upload
    for code in (python, upload):
        compile(code, "snippet", "exec")
    assert snippets.FAMILIES["train_ner"][1] == 4
    assert train_ner.FIXED == asdict(Recipe())  # a result without its recipe: the app's own defaults
