"""/train_gpt and /download_gpt through gradio_client, on the From scratch tab built into a small
Blocks app in this process (the handlers app.py serves): a tiny run, its zip, bad input."""

from __future__ import annotations

import zipfile

import pytest

from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def gpt_client():
    from gradio_client import Client

    from components.scratch import ui as scratch

    with served_tab(scratch.build) as url:
        yield Client(url, verbose=False)


def test_train_gpt_returns_losses_samples_and_numbers_then_downloads(gpt_client):
    data = gpt_client.predict(steps=10, layers=1, width=32, heads=2, corpus="tokenizers", api_name="/train_gpt")[-1]
    assert data["steps_run"] == 10 and len(data["losses"]) == 10 and data["stopped"] is None
    assert [s["step"] for s in data["samples"]] == [0, 10] and data["parameters"] > 0
    assert data["seconds"] > 0 and data["tokens_per_s"] > 0 and data["tokens"] == "bytes"
    path, note = gpt_client.predict(api_name="/download_gpt")
    with zipfile.ZipFile(path) as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= names
    assert "10 steps" in note


@pytest.mark.parametrize("kwargs,message", [
    (dict(width=96, heads=8, layers=1, steps=5000), "does not fit one request"),
    (dict(width=32, heads=3), "multiple of heads"),
    (dict(corpus="paste", text="   ", steps=5), "no letters or digits"),
])
def test_bad_input_is_answered_readably(gpt_client, kwargs, message):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=message):
        gpt_client.predict(api_name="/train_gpt", **kwargs)
