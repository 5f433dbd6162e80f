"""The session's tiny GPT in the model-box tabs: offered under an unguessable name, served by the
hub like a checkpoint, refused readably when gone or asked for the wrong role, and taken apart by
Anatomy (its recomputation holds on a model trained from scratch too)."""

from __future__ import annotations

import pytest
import torch

from backend import hub, scratch
from backend.anatomy import api as anatomy
from backend.engines.generation import generate
from backend.engines.generation.settings import parse_settings
from backend.runtime.errors import ModelLoadError
from backend.scratch import gpt_store

TEXT = "the cat sat on the mat. the dog sat on the log. " * 60
TINY = dict(corpus="paste", text=TEXT, layers=1, heads=2, width=32, context=16, batch=8, eval_every=10)


@pytest.fixture(autouse=True)
def fresh_store():
    gpt_store.STORE.set(None)
    yield
    gpt_store.STORE.set(None)


@pytest.mark.parametrize("tokens", ["bytes", "bpe"])
def test_the_trained_model_is_served_under_its_name_and_anatomy_recomputes_it(tokens):
    r = scratch.train_gpt("a", steps=20, learning_rate=5e-3, scheme=tokens, vocab_size=120, **TINY)
    name = r["model_box"]
    assert name.startswith("session:tinygpt-") and len(name) > 30
    lm = hub.load("decoder", name)
    assert lm.source == "session" and f"{r['parameters']:,} parameters" in lm.checkpoint
    assert lm.model is gpt_store.get_store().trained("a").model  # the session's own weights, not a copy
    ids = lm.tokenizer("the cat")["input_ids"]
    assert ids == gpt_store.get_store().trained("a").tokenizer.encode("the cat").ids  # the same tokens as training
    a = anatomy.anatomy("the cat sat", "", "decoder", 0, 0, -1, name)
    assert a["family"] == "gpt2" and a["within_tolerance"] and a["max_abs_diff"] < 1e-4
    assert a["model"]["checkpoint"] == lm.checkpoint and a["model"]["source"] == "session"


def test_a_model_without_an_end_token_generates_to_the_length_asked():
    name = scratch.train_gpt("a", steps=10, learning_rate=5e-3, **TINY)["model_box"]
    lm = hub.load("decoder", name)
    for settings in ({"max_new_tokens": 6}, {"strategy": "beam", "num_beams": 2, "max_new_tokens": 5}):
        out = generate.decode(lm.model, lm.tokenizer, "the ", parse_settings(settings)).to_dict()
        assert len(out["outputs"][0]["token_ids"]) == settings["max_new_tokens"]
    with torch.inference_mode():  # greedy's first token is the model's own argmax
        first = lm.model(torch.tensor([lm.tokenizer("the ")["input_ids"]])).logits[0, -1].argmax().item()
    out = generate.decode(lm.model, lm.tokenizer, "the ", parse_settings({"max_new_tokens": 1})).to_dict()
    assert out["outputs"][0]["token_ids"] == [first]


def test_a_guessed_or_gone_name_and_a_wrong_role_are_refused_readably():
    with pytest.raises(ModelLoadError, match="not a model of this session now"):
        hub.load("decoder", "session:tinygpt-guessed-name")
    with pytest.raises(ModelLoadError, match="not a model of this session now"):
        hub.load("decoder", "session:nosuchkind-x")
    name = scratch.train_gpt("a", steps=10, learning_rate=5e-3, **TINY)["model_box"]
    with pytest.raises(ModelLoadError, match="cannot serve the encoder role"):
        hub.load("encoder", name)
    gpt_store.get_store().drop("a")
    with pytest.raises(ModelLoadError, match="not a model of this session now"):
        hub.load("decoder", name)
    with pytest.raises(ModelLoadError, match="not a model of this session now"):
        anatomy.anatomy("the cat", "", "decoder", 0, 0, -1, name)


def test_a_second_training_offers_a_new_name_and_the_old_one_stops_working():
    first = scratch.train_gpt("a", steps=10, learning_rate=5e-3, **TINY)["model_box"]
    second = scratch.train_gpt("a", steps=10, learning_rate=5e-3, **TINY)["model_box"]
    assert first != second
    hub.load("decoder", second)
    with pytest.raises(ModelLoadError):
        hub.load("decoder", first)


def test_the_decoding_endpoints_run_on_the_model_box_model():
    from backend.decoding import api as decoding

    name = scratch.train_gpt("a", steps=10, learning_rate=5e-3, **TINY)["model_box"]
    mine = gpt_store.get_store().trained("a")
    out = decoding.decode("the ", {"max_new_tokens": 5}, model=name)
    assert out["model"]["source"] == "session" and "tiny GPT" in out["model"]["checkpoint"]
    expected = generate.decode(mine.model, hub.load("decoder", name).tokenizer, "the ",
                               parse_settings({"max_new_tokens": 5})).to_dict()
    assert out["outputs"][0]["token_ids"] == expected["outputs"][0]["token_ids"]
    dist = decoding.step_distribution(out["prompt_token_ids"], model=name)
    assert dist["model"]["source"] == "session"
    hand = decoding.decode_by_hand("the ", [], 3, "greedy", 2, model=name)
    assert hand["model"]["source"] == "session" and len(hand["path_token_ids"]) == 2
    grow = decoding.generation_attention("the ", 2, -1, None, model=name)
    assert grow["model"]["source"] == "session"
    rows = decoding.compare("the ", [{"max_new_tokens": 3}, {"strategy": "beam", "num_beams": 2,
                                                             "max_new_tokens": 3}], model=name)
    assert rows["model"]["source"] == "session"
    with pytest.raises(ModelLoadError, match="not a model of this session now"):
        decoding.decode("the ", {"max_new_tokens": 2}, model="session:tinygpt-guessed")
