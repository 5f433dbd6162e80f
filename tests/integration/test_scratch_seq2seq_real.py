"""The tiny encoder-decoder's real recipe (the tab's defaults, the shipped toy dates): after training
it translates most held-out dates exactly right, and its cross-attention equals a recomputation
from its weights for every layer and head."""

from __future__ import annotations

import time

import pytest

from backend import scratch
from backend.scratch import seq2seq_store

EXAMPLES = {"the twenty-third of march , two thousand and four": "2004-03-23",
            "july fourth nineteen seventy-six": "1976-07-04",
            "thirty-first of december nineteen ninety-nine": "1999-12-31"}


@pytest.fixture(scope="module")
def trained():
    seq2seq_store.STORE.set(None)
    t0 = time.perf_counter()
    r = scratch.train_seq2seq("real")
    r["wall_s"] = time.perf_counter() - t0
    yield r
    seq2seq_store.STORE.set(None)


def test_the_default_recipe_translates_most_held_out_dates_within_two_minutes(trained):
    d = scratch.SEQ2SEQ_DEFAULTS
    assert trained["steps_run"] == d["steps"] and trained["stopped"] is None
    t = trained["test"]
    print(f"\n{d['steps']} steps in {trained['train_seconds']:.1f} s of steps ({trained['wall_s']:.1f} s in all); "
          f"held-out exact match {t['exact_match']:.1%} ({t['right']}/{t['items']})")
    assert t["items"] == 500 and t["exact_match"] >= 0.8, t
    assert trained["final"]["val_exact_match"] >= 0.8
    assert trained["wall_s"] < 180  # ~2 minutes on a busy 2-core CPU, with room for a loaded box


def test_the_examples_translate_and_the_cross_attention_recompute_holds_on_every_head(trained):
    s = trained["settings"]
    for text, want in EXAMPLES.items():
        assert scratch.translate_toy("real", text)["output"] == want
    for layer in range(s["layers"]):
        for head in range(s["heads"]):
            j = scratch.translate_toy("real", "the twenty-third of march , two thousand and four", layer, head)
            assert j["check"]["max_abs_diff"] < 1e-4, (layer, head, j["check"])
