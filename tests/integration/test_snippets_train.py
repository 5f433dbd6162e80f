"""The Train tab's snippet is true: /train runs here, in-process, on a small upload (three labels, the
three methods, fine-tuning capped by max_examples over two epochs, a budget that cuts nothing); its "The same in
Python" snippet then runs in the session's fresh, offline interpreter (snippet_runner.py: the repository off
sys.path, cwd the upload's folder, since the snippet reads the file by its name) and must give the run back: the same
test predictions for every method, the same accuracies, the probabilities within 1e-4. The shipped sets' reading is
checked against the app's own reader (no model runs for that)."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest

from backend import snippets
from backend.engines.classify import datasets
from backend.snippets import train as train_snippet
from backend.train import api, features, use
from backend.train.store import get_store
from tests.integration.test_snippets_reproduce import REPO

SESSION = "snippets-train"
ITEMS = ["parcel", "book", "chair", "lamp", "phone", "jacket", "kettle"]
WORDS = {"positive": ["wonderful, I love it", "great value and it works perfectly", "a delight, thank you"],
         "negative": ["broken on arrival, I want a refund", "awful, it stopped working", "a waste of money"],
         "neutral": ["delivered on Tuesday", "the same as the photo", "in a cardboard box"]}
INPUTS = {"dataset": "upload", "text_column": "", "label_column": "", "methods": list(api.METHODS), "epochs": 2,
          "max_examples": 16, "max_seconds": 600, "learning_rate": 3e-4, "batch_size": 8, "learning_curve": False,
          "curve_finetune": False, "seed": 3}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(inputs, result, the app's test probabilities per method, the upload's folder)."""
    folder = tmp_path_factory.mktemp("train_upload")
    path = folder / "reviews.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["review", "label"])  # the text column is guessed ("review"), as the tab does without a name
        for label, words in WORDS.items():
            for i in range(20):
                out.writerow([f"The {ITEMS[i % len(ITEMS)]} ({i}): {words[i % len(words)]}.", label])
    inputs = {**INPUTS, "file": str(path)}
    result = api.train(SESSION, **inputs)
    assert result["methods"]["finetune"]["stopped"] == "finished"  # nothing cut: the snippet runs every step
    assert result["methods"]["finetune"]["examples"] < result["dataset"]["sizes"]["train"]  # max_examples capped it
    ds = api.load_dataset("upload", str(path))
    texts = [t for t, _ in ds.test]
    trained = get_store().trained(SESSION)
    probs = {"zero_shot": features.zero_shot_probs(texts, ds.labels),
             "probe": use.probabilities(trained, "probe", texts),
             "finetune": use.probabilities(trained, "finetune", texts)}
    api.drop_session(SESSION)
    return inputs, result, probs, str(folder)


@pytest.fixture(scope="module")
def reproduced(run, snippet_runner):
    inputs, result, _, folder = run
    python = snippets.for_result("train", inputs, result)["python"]
    assert "import backend" not in python and "from backend" not in python
    return snippet_runner.run([{"name": "train", "python": python, "cwd": folder, "changes_model": True,  # fine-tunes
                                "take": {"labels": "labels", "probs": "{m: p.tolist() for m, p in probs.items()}"}}])["train"]


def test_the_train_snippet_gives_every_methods_predictions_back(run, reproduced):
    _, result, app, _ = run
    assert reproduced["labels"] == result["dataset"]["labels"]
    assert set(reproduced["probs"]) == set(app) == set(result["methods"])
    test = api.load_dataset("upload", run[0]["file"]).test
    y = np.array([y for _, y in test])
    for method, probs in app.items():
        mine = np.array(reproduced["probs"][method])
        assert mine.argmax(1).tolist() == probs.argmax(1).tolist(), method
        assert round(float((mine.argmax(1) == y).mean()), 4) == result["methods"][method]["accuracy"], method
        np.testing.assert_allclose(mine, probs, atol=1e-4, rtol=0, err_msg=method)


@pytest.mark.parametrize("name", datasets.SHIPPED)
def test_the_snippet_reads_a_shipped_set_as_the_app_does(name, tmp_path):
    ds = datasets.load_shipped(name)
    imports, lines = train_snippet.dataset_lines({}, {"dataset": ds.describe()})
    code = "\n".join(imports + lines)
    assert "backend" not in code
    ns: dict = {}
    cwd = os.getcwd()
    try:
        os.chdir(REPO)  # the snippet reads the files the app ships, from a checkout
        exec(compile(code, f"{name}_data", "exec"), ns)
    finally:
        os.chdir(cwd)
    assert ns["labels"] == ds.labels
    assert (ns["train"], ns["validation"], ns["test"]) == (ds.train, ds.validation, ds.test)
