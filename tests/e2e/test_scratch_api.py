"""/train_tokenizer through gradio_client, on the tab built into a small Blocks app in this process
(the same handler app.py serves): a valid call, an upload, and bad input answered readably."""

from __future__ import annotations


import pytest

from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def scratch_client():
    from gradio_client import Client

    from components.scratch import ui as scratch

    with served_tab(scratch.build) as url:
        yield Client(url, verbose=False)


def test_train_tokenizer_returns_json_with_merges_replay_and_check(scratch_client):
    out = scratch_client.predict(algorithm="BPE", vocab_size=400, corpus="glossary",
                                 sentence="Attention is all you need.", api_name="/train_tokenizer")
    data = out[-1]
    assert data["algorithm"] == "BPE" and data["vocab_size"] == {"asked": 400, "learned": 400}
    assert len(data["merges"]) == 50 and data["merges"][0]["count"] > 0
    assert data["scratch_check"]["identical"] is True
    timeline = data["replay"]["timeline"]
    assert timeline[0]["after"] == 0 and len(timeline[0]["tokens"]) == len("Attentionisallyouneed.")
    assert {r.get("role") for r in data["tokens_per_word"]} >= {"embedder", "decoder"}
    assert data["lengths"]["total"] == 400


def test_train_tokenizer_defaults_and_an_uploaded_file(scratch_client, tmp_path):
    from gradio_client import handle_file

    path = tmp_path / "story.txt"
    path.write_text("the cat sat on the mat; the dog sat on the log. " * 40, encoding="utf-8")
    data = scratch_client.predict(algorithm="WordPiece", vocab_size=100, corpus="upload",
                                  upload=handle_file(str(path)), api_name="/train_tokenizer")[-1]
    assert data["algorithm"] == "WordPiece" and "story.txt" in data["corpus"]["what"]
    assert all(m["left"] + m["right"].removeprefix("##") == m["token"] for m in data["merges"])


@pytest.mark.parametrize("kwargs,message", [
    (dict(vocab_size=50), "vocab_size must be between 100 and 8000"),
    (dict(vocab_size="many"), "vocab_size must be a whole number"),
    (dict(algorithm="SentencePiece"), "algorithm must be one of BPE, WordPiece, Unigram"),
    (dict(corpus="paste", text="   "), "no letters or digits"),
    (dict(corpus="upload"), "No file was uploaded"),
])
def test_bad_input_is_answered_readably_and_the_server_stays_up(scratch_client, kwargs, message):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=message):
        scratch_client.predict(api_name="/train_tokenizer", **kwargs)
    assert scratch_client.predict(vocab_size=100, api_name="/train_tokenizer")[-1]["vocab_size"]["asked"] == 100
