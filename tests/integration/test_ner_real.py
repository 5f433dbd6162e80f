"""The offline NER model with the real all-MiniLM-L6-v2, as the hub serves it for the `ner` role
on the local profile: trained once by the fixed recipe (or read from the cache `make run` built),
its saved folder re-scored on the shipped test split, and run on news sentences that are not in
the data through the app's own token-classification path (transformers' pipeline)."""

from __future__ import annotations

import json

import pytest

from backend.engines.ner import data as ner_data
from backend.engines.ner import token_classification as tc
from backend.hub import ner_builder

pytestmark = pytest.mark.integration

# The served recipe's entity F1 on the test split must reach this (the issue asks 0.85).
TEST_F1_FLOOR = 0.85

# New sentences: none of them is in assets/data/ner (some names are, as in real news).
UNSEEN = [
    ("Angela Merkel met Emmanuel Macron in Berlin to discuss Airbus.",
     {("Angela Merkel", "PER"), ("Emmanuel Macron", "PER"), ("Berlin", "LOC"), ("Airbus", "ORG")}),
    ("Satya Nadella said Microsoft will open a new office in Lagos next year.",
     {("Satya Nadella", "PER"), ("Microsoft", "ORG"), ("Lagos", "LOC")}),
    ("Shares of Toyota fell in Tokyo after Reuters reported the recall.",
     {("Toyota", "ORG"), ("Tokyo", "LOC"), ("Reuters", "ORG")}),
    ("Jacinda Ardern spoke to students at the University of Auckland on Monday.",
     {("Jacinda Ardern", "PER"), ("University of Auckland", "ORG")}),
]


@pytest.fixture(scope="module")
def served():
    """The `ner` role as the local profile serves it, and the folder it was built into."""
    from backend import hub

    lm = hub.load("ner")
    assert lm.method == "fine-tuned", lm.method
    return lm, ner_builder.cache_dir(hub.resolve("embedder").location)


def test_the_recipe_reaches_the_f1_floor_on_the_test_split(served):
    lm, folder = served
    meta = json.loads((folder / ner_builder.META_FILE).read_text())
    data = ner_data.load_shipped()
    assert meta["recipe"] == ner_builder.RECIPE
    assert meta["steps"] == ner_builder.RECIPE_SETTINGS.steps(len(data.train))
    assert meta["test_f1"] >= TEST_F1_FLOOR, meta["test_f1_per_type"]
    for kind in ("PER", "LOC", "ORG", "MISC"):
        assert meta["test_f1_per_type"][kind] >= 0.75, (kind, meta["test_f1_per_type"])
    # The saved folder scores what its meta (and the result badge) says.
    classifier, tokenizer, labels = tc.load_folder(folder)
    rep = tc.evaluate(classifier, tokenizer, data.test, labels)["report"]
    assert rep["overall"]["f1"] == pytest.approx(meta["test_f1"], abs=1e-3)
    assert lm.describe()["test_f1"] == meta["test_f1"]


def test_unseen_news_sentences_through_the_apps_ner_task(served):
    from backend.pipelines import tasks

    lm, _ = served
    r = tasks.ner(lm, [t for t, _ in UNSEEN], aggregation="simple")
    assert r["method"] == "fine-tuned"
    misses = []
    for (text, expected), result in zip(UNSEEN, r["results"]):
        got = {(e["word"], e["entity_group"]) for e in result["entities"]}
        for e in result["entities"]:
            assert text[e["start"]:e["end"]] == e["word"] and 0.0 < e["score"] <= 1.0, e
        if not expected <= got:
            misses.append((text, sorted(expected - got), sorted(got)))
    assert misses == []
