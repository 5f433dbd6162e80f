"""`/intervene` and `/sweep_heads` over HTTP with gradio_client, including bad input.

Against the lane's running app (app.py with every tab, the real local models, offline): the API
names, parameter names and defaults are the Interventions tab's as the app serves them."""

from __future__ import annotations

import pytest

# `client`: tests/conftest.py's, a gradio_client on the lane's app (app.py, every tab).


def test_the_api_names_and_parameters(client):
    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert {"/intervene", "/sweep_heads"} <= set(api)
    assert [p["parameter_name"] for p in api["/intervene"]["parameters"]] == ["model", "text", "spec", "new_tokens",
                                                                               "top_k"]
    assert [p["parameter_name"] for p in api["/sweep_heads"]["parameters"]] == ["model", "text", "layer"]
    assert all(p["parameter_has_default"] for p in api["/intervene"]["parameters"])


def test_intervene_decoder_by_keyword(client):
    out = client.predict(model="decoder", text="The capital of France is", spec="L0.mlp=0", new_tokens=2,
                         api_name="/intervene")
    r = out[0]
    assert r["model"]["checkpoint"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and r["spec"] == "L0.mlp=0"
    assert r["check"]["within_tolerance"] and r["next_token"]["kl"] > 1.0
    assert r["next_token"]["top1_before"] == " Paris" and r["next_token"]["top1_after"] != " Paris"
    assert len(r["continuation"]["before_tokens"]) == 2


def test_intervene_encoder_and_sweep(client):
    r = client.predict(model="encoder", text="time flies like an arrow", spec="L1H*=0", api_name="/intervene")[0]
    assert r["role"] == "encoder" and r["num_heads"] == 12 and r["embedding"]["cosine"] < 1
    assert len(r["edits"]) == 12 and r["check"]["within_tolerance"]
    s = client.predict(model="encoder", text="time flies like an arrow", layer=1, api_name="/sweep_heads")[0]
    assert s["complete"] and [h["rank"] for h in s["heads"]] == list(range(1, 13))


@pytest.mark.parametrize("kwargs,message", [
    (dict(spec="L30H0=0"), "layer 30 does not exist"),
    (dict(spec="L1H9=0"), "head 9 does not exist"),
    (dict(spec="drop everything"), "Cannot read"),
    (dict(text=""), "empty"),
    (dict(model="gpt-5"), "model must be one of"),
    (dict(new_tokens="many"), "new_tokens must be"),
])
def test_bad_input_is_a_readable_error(client, kwargs, message):
    with pytest.raises(Exception, match=message):
        client.predict(**{"model": "decoder", "text": "The cat", **kwargs}, api_name="/intervene")
    assert client.predict(model="encoder", text="ok", spec="", api_name="/intervene")[0]["embedding"]["cosine"] == \
        pytest.approx(1.0, abs=1e-12)  # the server is healthy after


def test_sweep_bad_layer(client):
    with pytest.raises(Exception, match="layer must be between 0 and 5"):
        client.predict(model="encoder", text="time flies", layer=6, api_name="/sweep_heads")
