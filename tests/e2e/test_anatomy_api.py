"""`/anatomy` through gradio_client against the running app (local profile)."""

from __future__ import annotations

import pytest

from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_gpt2


def _anatomy(client, text, text_b="", role="encoder", layer=0, head=0, token_index=-1, override=""):
    out = client.predict(text=text, text_b=text_b, role=role, layer=layer, head=head, token_index=token_index,
                         override=override, api_name="/anatomy")
    assert isinstance(out, (list, tuple))
    return out[0]


def _error(client, *args, **kwargs) -> str:
    with pytest.raises(Exception) as info:
        _anatomy(client, *args, **kwargs)
    return str(info.value)


def test_anatomy_encoder_pair(client):
    r = _anatomy(client, "time flies like an arrow", "fruit flies", "encoder", 3, 4, 1)
    assert r["family"] == "bert" and r["within_tolerance"] and r["max_abs_diff"] < 1e-4
    assert len(r["layers"]) == 7 and r["layers"][0]["name"] == "embeddings"
    assert r["masks"]["kind"] == "padding" and r["masks"]["attention_mask"] == [1, 1, 1, 1, 0, 0, 0]
    assert r["pooling"]["within_tolerance"] and r["budget"]["matches"]
    assert r["stream"]["token"] == "time" and r["model"]["role"] == "encoder"
    assert any(c["name"] == "attention_sublayer" and "layer_norm(" in c["source"] for c in r["code"])


def test_anatomy_decoder_by_keyword_defaults(client):
    r = client.predict(text="The capital of France is", role="decoder", api_name="/anatomy")[0]
    assert r["family"] == "llama" and r["num_layers"] == 30 and r["within_tolerance"]
    assert r["lens"]["agrees_with_greedy"] and r["lens"]["greedy_next_token"].strip() == "Paris"
    assert r["masks"]["kind"] == "causal" and r["masks"]["layer"] == 0 and r["masks"]["head"] == 0
    assert r["tokens"] == ["The", " capital", " of", " France", " is"]  # sentence B defaults to empty
    assert r["budget"]["total"] == r["budget"]["num_parameters"]


def test_anatomy_errors_are_readable(client):
    assert "empty" in _error(client, "")
    assert "at most 128" in _error(client, "word " * 200)
    assert "Layer 6 does not exist" in _error(client, "hi", layer=6)
    assert "Head 9 does not exist" in _error(client, "hi", role="decoder", head=9)
    assert "Role must be 'encoder' or 'decoder', got 'gpt9'" in _error(client, "hi", role="gpt9")  # the backend says it
    assert "layer must be a whole number" in _error(client, "hi", layer="abc")
    assert "override must be text" in _error(client, "hi", override=[1, 2])


def test_anatomy_gpt2_and_a_model_without_recipe(client, tmp_path):
    gpt = save_tiny(tiny_gpt2(vocab_size=len(smollm2_tokenizer())), smollm2_tokenizer(), tmp_path / "tiny-gpt2")
    r = _anatomy(client, "The cat sat", role="decoder", override=str(gpt))
    assert r["family"] == "gpt2" and r["within_tolerance"] and r["lens"]["agrees_with_greedy"]
    from transformers import DistilBertConfig, DistilBertModel

    distil = DistilBertModel(DistilBertConfig(vocab_size=len(minilm_tokenizer()), dim=32, n_layers=1, n_heads=2,
                                              hidden_dim=37))
    folder = save_tiny(distil, minilm_tokenizer(), tmp_path / "tiny-distilbert")
    msg = _error(client, "time flies", role="encoder", override=str(folder))
    assert "no from-scratch recipe for distilbert" in msg and "Traceback" not in msg
