"""The Train tab's NER snippet is true: /train_ner runs here, in-process, on the local profile (a
small run: a seeded sample of 48 shipped train sentences, three epochs; and two uploads, CoNLL columns and
character-span JSONL, split 70/15/15 by the app); its "The same in Python" snippet, plain transformers + torch,
then runs in the session's fresh offline interpreter (snippet_runner.py: the repository not on sys.path,
each case in its own namespace and with its own model) and must tag every test sentence as the app did, word
for word, and give the same per-type scores."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
import torch

from backend import snippets
from backend.engines.ner import data as ner_data, metrics as ner_metrics
from backend.engines.ner.token_classification import Recipe
from backend.runtime import budget as request_budget
from backend.snippets import train_ner
from backend.train import ner_api
from tests.integration.test_snippets_reproduce import REPO

TAKE = {"predicted": "predicted", "scores": "scores", "train": "len(train)", "steps": "step + 1",
        "test": "[s['tokens'] for s in test]"}
# Three epochs of six batches: enough to tag entities (the best validation epoch was the second here, so the
# snippet's loop stops at step 12 of 18: the kept weights); word shapes on, as the tab's default.
SHIPPED = {"source": "shipped", "file": None, "epochs": 3, "max_sentences": 48, "learning_rate": 0.001,
           "batch_size": 8, "word_shapes": True, "seed": 3}
UPLOAD_SENTENCES = 36  # split 5 / 5 / 26 by the app: two steps of 16 (too few to tag entities: the data is compared)


def _conll(sentences) -> str:
    return "\n\n".join("\n".join(f"{w} {t}" for w, t in zip(s.tokens, s.tags)) for s in sentences) + "\n"


def _spans(sentences) -> str:
    """JSONL of {"text", "entities"} with character offsets (the words joined by spaces)."""
    rows = []
    for s in sentences:
        starts = [sum(len(w) + 1 for w in s.tokens[:i]) for i in range(len(s.tokens))]
        entities = [{"start": starts[a], "end": starts[b] + len(s.tokens[b]), "label": kind}
                    for kind, a, b in ner_metrics.entities(s.tags)]
        rows.append(json.dumps({"text": " ".join(s.tokens), "entities": entities}))
    return "\n".join(rows) + "\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(name, inputs, result, cwd): the shipped set with word shapes, an upload of CoNLL columns without them,
    one of character spans (JSONL) with them."""
    folder = tmp_path_factory.mktemp("ner_upload")
    upload, spans = folder / "my_entities.conll", folder / "spans.jsonl"
    upload.write_text(_conll(ner_data.load_shipped().train[-UPLOAD_SENTENCES:]), encoding="utf-8")
    spans.write_text(_spans(ner_data.load_shipped().train[:UPLOAD_SENTENCES]), encoding="utf-8")
    uploaded = {**SHIPPED, "source": "upload", "file": str(upload), "max_sentences": 0, "epochs": 1,
                "batch_size": 16, "word_shapes": False, "seed": 0}
    by_spans = {**uploaded, "file": str(spans), "word_shapes": True, "seed": 1}
    made, threads = [], torch.get_num_threads()
    torch.set_num_threads(1)  # two threads on a busy 2-core box: twice the wall time (the tags are the same)
    try:
        with request_budget.scope(600):  # generous: the plan fits and nothing is cut
            for name, inputs, cwd in (("shipped", SHIPPED, REPO), ("upload", uploaded, str(folder)),
                                      ("spans", by_spans, str(folder))):
                result = ner_api.train(f"snippet-ner-{name}", **inputs)
                assert not result["stopped"] and result["steps"] == result["total_steps"], name
                made.append((name, inputs, result, cwd))
    finally:
        torch.set_num_threads(threads)
    return made


@pytest.fixture(scope="module")
def reproduced(runs, snippet_runner):
    return snippet_runner.run([{"name": name, "python": snippets.for_result("train_ner", inputs, result)["python"],
                                "take": TAKE, "cwd": cwd, "changes_model": True, "threads": 1}  # one thread: as above
                               for name, inputs, result, cwd in runs])


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
    (name, inputs, result, _), (_, up_inputs, up_result, _) = runs[:2]
    python = snippets.for_result("train_ner", inputs, {**result, "best_step": 2, "total_steps": 6})["python"]
    assert "steps = 2  # the app kept the weights after step 2 of 6" in python and "batches[:steps]" in python
    assert "import backend" not in python and "from backend" not in python
    assert len([l for l in python.splitlines() if l.startswith("# What the app adds:")]) == 1
    assert "random.Random(\"ner-slice-3\").sample(train, 48)" in python and "word_shape(" in python
    upload = snippets.for_result("train_ner", up_inputs, up_result)["python"]
    assert "open('my_entities.conll'" in upload and str(up_inputs["file"]) not in upload
    assert "word_shape" not in upload and "sample(train" not in upload and "batches[:steps]" not in upload
    on_gpu = snippets.for_result("train_ner", inputs, {**result, "model": {**result["model"], "device": "cuda:0"}})
    assert ".to('cuda')  # the device the run trained on" in on_gpu["python"] and "'cuda'" not in python
    assert "device='cuda'" in on_gpu["python"] and ".softmax(-1).cpu().numpy()" in on_gpu["python"]
    stopped = snippets.for_result("train_ner", inputs, {k: v for k, v in result.items() if k in (
        "dataset", "model", "recipe", "plan", "train_sentences")} | {"stopped": True})["python"]
    assert "the app kept no model; this runs every step" in stopped and "batches[:steps]" not in stopped
    for code in (python, upload, on_gpu["python"], stopped):
        compile(code, "snippet", "exec")
    assert snippets.FAMILIES["train_ner"][1] == 4
    assert train_ner.FIXED == asdict(Recipe())  # a result without its recipe: the app's own defaults
