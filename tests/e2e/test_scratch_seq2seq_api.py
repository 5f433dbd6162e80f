"""/train_seq2seq, /translate_toy and /download_seq2seq through gradio_client, on the From scratch
tab's encoder-decoder section served alone in this process (the handlers app.py serves): a short
run, a translation with its attentions and check, the zip, bad input."""

from __future__ import annotations

import zipfile

import pytest

from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def s2s_client():
    from gradio_client import Client

    from components.scratch import seq2seq as scratch_seq2seq

    with served_tab(scratch_seq2seq.build) as url:
        yield Client(url, verbose=False)


def test_translate_before_training_says_to_train_first(s2s_client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="No tiny encoder-decoder in this session yet"):
        s2s_client.predict("the first of may nineteen ninety", 0, 0, api_name="/translate_toy")


def test_train_then_translate_with_attentions_and_check_then_download(s2s_client):
    data = s2s_client.predict(steps=30, layers=1, width=32, heads=2, api_name="/train_seq2seq")[-1]
    assert data["steps_run"] == 30 and len(data["losses"]) == 30 and data["stopped"] is None
    assert data["losses"][-1] < data["losses"][0]
    assert [e["step"] for e in data["evals"]] == [0, 30] and data["parameters"] > 0
    assert data["test"]["items"] == 500 and 0 <= data["test"]["exact_match"] <= 1
    assert {"source", "reference", "output", "right"} <= set(data["test"]["rows"][0])
    j = s2s_client.predict("the first of may nineteen ninety", 0, 1, api_name="/translate_toy")[-1]
    assert j["layer"] == 0 and j["head"] == 1 and j["layers"] == 1 and j["heads"] == 2
    src, out = j["source_tokens"], j["output_tokens"]
    assert src[:3] == ["the", "first", "of"] and src[-1] == "</s>" and out[-1] == "</s>"
    assert len(j["cross_attention"]) == len(out) and len(j["cross_attention"][0]) == len(src)
    assert len(j["encoder_attention"]) == len(src) and len(j["decoder_attention"]) == len(out)
    assert all(abs(sum(row) - 1) < 1e-3 for row in j["cross_attention"])
    assert j["check"]["max_abs_diff"] < 1e-4 and j["check"]["below_1e-4"]
    path, note = s2s_client.predict(api_name="/download_seq2seq")
    with zipfile.ZipFile(path) as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md"} <= names
    assert "30 steps" in note


@pytest.mark.parametrize("api,kwargs,message", [
    ("/train_seq2seq", dict(width=96, heads=8, layers=4, steps=3000), "does not fit one request"),
    ("/train_seq2seq", dict(width=32, heads=3), "multiple of heads"),
    ("/train_seq2seq", dict(learning_rate=1.0), "learning_rate must be between"),
    ("/translate_toy", dict(text="   "), "empty"),
    ("/translate_toy", dict(text="one " * 100), "at most 200"),
])
def test_bad_input_is_answered_readably(s2s_client, api, kwargs, message):
    from gradio_client.exceptions import AppError

    if api == "/translate_toy":  # a model in the session first, so the text check is what answers
        s2s_client.predict(steps=5, layers=1, width=32, heads=2, api_name="/train_seq2seq")
    with pytest.raises(AppError, match=message):
        s2s_client.predict(api_name=api, **kwargs)
