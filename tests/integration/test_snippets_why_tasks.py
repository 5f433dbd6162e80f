"""The Why tab's snippet for its other tasks: zero-shot by embedding similarity (a label's softmax of
cosine / T), a token's NER tag (the offline model: encoder, word shapes, a head per token; chapter 4's multilingual
run: the packaged encoder with the run's top layers and head), a QA reader's span (start + end logit, question and
context as a pair) and a classifier trained in this session (fine-tuned and the probe, loaded from the Train tab's
Download, unzipped in the snippet's working folder). Each runs in-process on the local profile; its snippet then
runs in the session's fresh offline interpreter (snippet_runner.py: the repository is not importable there) and
Captum's scores on the written-out forward must be the app's, token by token."""

from __future__ import annotations

import csv
import zipfile

import pytest

from backend import snippets, why as attribution
from backend.train import api as train_api, use as train_use
from tests.integration.test_snippets_reproduce import TAKE, same_attributions

METHODS = "integrated_gradients,gradient_x_input,occlusion"
RUNS = [
    ("why_zero_shot", dict(text="The match ended in a late goal for the home side.", task="zero_shot",
                           labels="sport, politics, cooking", methods=METHODS, steps=8, random_orders=1)),
    # 'Parma' is a word's first piece; 'rkel' (in 'Merkel', asked by a character inside it) a later one, read
    # at its word's first piece with B-PER counted as I-PER: both ways of reading a tag are checked
    ("why_ner", dict(text="Angela Merkel visited the Barilla factory in Parma.", task="ner", word="Parma",
                     methods=METHODS, steps=8, random_orders=1)),
    ("why_ner_later_piece", dict(text="Angela Merkel visited the Barilla factory in Parma.", task="ner", char=11,
                                 label="I-PER", methods=METHODS, steps=8, random_orders=1)),
    ("why_qa", dict(text="The Eiffel Tower was finished in 1889 for the World's Fair in Paris.", task="qa",
                    question="When was the Eiffel Tower finished?", methods=METHODS, steps=8, random_orders=1)),
    # chapter 4's German-only run (model box "multilingual-de"): 'ma' of 'Parma' is a later piece (no \u2581), its
    # tag read at 'Par' with B-LOC counted as I-LOC
    ("why_multilingual_ner", dict(text="Angela Merkel besuchte die Fabrik von Barilla in Parma.", task="ner",
                                  override="multilingual-de", char=52, label="I-LOC", methods=METHODS, steps=8,
                                  random_orders=1)),
]
SESSION = "snippets-why-session"
SESSION_TEXT = "The lamp arrived broken, I want a refund."
WORDS = {"positive": ["wonderful, I love it", "great value and it works perfectly"],
         "negative": ["broken on arrival, I want a refund", "awful, it stopped working"]}
TRAINING = {"dataset": "upload", "methods": ["probe", "finetune"], "epochs": 1, "max_examples": 16,
            "max_seconds": 600, "learning_rate": 3e-4, "batch_size": 8, "learning_curve": False, "seed": 1}


@pytest.fixture(scope="module")
def session_runs(tmp_path_factory):
    """A tiny classifier trained in this session (probe and fine-tuning), each method's Download unzipped in a
    folder of its own, and an attribution of each: [(name, args, result, the folder the snippet runs in)]."""
    root = tmp_path_factory.mktemp("why_session")
    upload = root / "reviews.csv"
    with open(upload, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["review", "label"])
        for label, words in WORDS.items():
            for i in range(12):
                out.writerow([f"The parcel ({i}): {words[i % len(words)]}.", label])
    train_api.train(SESSION, file=str(upload), **TRAINING)
    made = []
    try:
        for method in ("finetune", "probe"):
            unzipped = root / method
            with zipfile.ZipFile(train_use.export(SESSION, method, root=str(root / "downloads"))["path"]) as z:
                z.extractall(unzipped)  # the Train tab's Download, as a learner unzips it
            args = dict(text=SESSION_TEXT, task="session", session_id=SESSION, trained_method=method,
                        methods=METHODS, steps=8, random_orders=1)
            made.append((f"why_session_{method}", args, attribution.attribute(**args), str(unzipped)))
    finally:
        train_api.drop_session(SESSION)
    return made


@pytest.fixture(scope="module")
def runs(session_runs):
    return [(name, args, attribution.attribute(**args)) for name, args in RUNS] + [r[:3] for r in session_runs]


@pytest.fixture(scope="module")
def reproduced(runs, session_runs, snippet_runner):
    cwd = {name: folder for name, _, _, folder in session_runs}
    return snippet_runner.run([
        {"name": name, "python": snippets.for_result("attribute", args, result)["python"], "take": TAKE["attribute"],
         "cwd": cwd.get(name),  # a session's classifier: its Download unzipped there, read by a relative path
         # loads its own copy: a multilingual run loads its layers into the encoder it loaded; a session's relative
         # folder names another model in another working folder
         "changes_model": name in cwd or name.startswith("why_multilingual")}
        for name, args, result in runs])


def test_the_runs_are_the_tasks_asked_for(runs):
    """The snippets below are checked on what they claim: similarity zero-shot, the NER model's tag at a first and
    at a later piece, the reader's span; none of them falls back to the 'not written out' note."""
    by_name = {name: result for name, _, result in runs}
    assert "cosines" in by_name["why_zero_shot"]["prediction"]
    assert by_name["why_ner"]["prediction"]["focus"]["token"] == "Parma"
    later = by_name["why_ner_later_piece"]["prediction"]
    assert later["label"] == "I-PER" and later["focus"]["token"] != "Merkel" and later["focus"]["start"] > 7
    assert by_name["why_qa"]["prediction"]["span"]["answer"]
    multi = by_name["why_multilingual_ner"]
    assert multi["model"]["run"] == "de" and multi["prediction"]["label"] == "I-LOC"
    assert multi["prediction"]["focus"]["token"] == "ma"
    for method in ("finetune", "probe"):
        model = by_name[f"why_session_{method}"]["model"]
        assert model["source"] == "session" and model["trained_method"] == method
    for name, args, result in runs:
        python = snippets.for_result("attribute", args, result)["python"]
        assert "not written out" not in python and "def forward(" in python, name


def test_why_task_snippets_give_the_same_attributions(runs, reproduced):
    """Integrated gradients at the steps the run ended at, gradient x input and occlusion (a token removed, what
    moves with it moved too), within 1e-4 of the result (relative past 1)."""
    checked = 0
    for name, _, result in runs:
        checked += same_attributions(name, reproduced[name], result)
    assert checked == 3 * len(runs) == 3 * (len(RUNS) + 2)
