"""`/intervene` and `/sweep_heads` over HTTP with gradio_client, including bad input.

The tab's own `build()` is served in a subprocess (the real local models, offline), as app.py
serves it among the other tabs: the API names, parameter names and defaults are the tab's."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from gradio_client import Client

from tests.conftest import ARTIFACTS, ROOT

SERVE = """
import sys, gradio as gr
from components.interventions import ui as interventions
with gr.Blocks() as demo:
    interventions.build()
demo.queue().launch(server_name="127.0.0.1", server_port=int(sys.argv[1]))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def client():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log = open(ARTIFACTS / "interventions-e2e.log", "w")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TLAB_PROFILE="local", GRADIO_ANALYTICS_ENABLED="False",
               PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", SERVE, str(port)], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.time() + 180
        while True:
            assert proc.poll() is None, (ARTIFACTS / "interventions-e2e.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(url + "gradio_api/info", timeout=5):
                    break
            except OSError:
                assert time.time() < deadline, "the tab's app did not answer in 180 s"
                time.sleep(1)
        yield Client(url, verbose=False)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


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
