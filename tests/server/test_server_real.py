"""The app's generation against a real vLLM server serving the same converted SmolLM2 in fp32.

Tolerance: per-step probabilities within 1e-4 of the in-process ones (measured: ~1.3e-5; both
sides fp32, different kernels), and the same candidates in the same order.
"""

from __future__ import annotations

import pytest

from backend.engines.server import generation as remote
from backend.engines.generation import generate

PROB_TOL = 1e-4
PROMPTS = [("Once upon a time", False), ("What is the capital of France?", True), ("def add(a, b):", False)]


@pytest.mark.parametrize("prompt,chat", PROMPTS)
def test_greedy_equals_in_process_greedy(server, lm, prompt, chat):
    s = {"strategy": "greedy", "max_new_tokens": 16, "chat_template": chat}
    got = remote.decode(server, lm.tokenizer, prompt, s)
    want = generate.decode(lm.model, lm.tokenizer, prompt, s)
    assert got.prompt_token_ids == want.prompt_token_ids
    assert got.outputs[0]["token_ids"] == want.outputs[0]["token_ids"] and got.text == want.text
    assert got.finish_reason == want.finish_reason
    assert abs(got.sequence_logprob - want.sequence_logprob) < 1e-3


@pytest.mark.parametrize("prompt,chat", PROMPTS)
def test_per_step_probabilities_agree(server, lm, prompt, chat):
    s = {"strategy": "greedy", "max_new_tokens": 16, "chat_template": chat, "top_n": 5}
    got = remote.decode(server, lm.tokenizer, prompt, s)
    want = generate.decode(lm.model, lm.tokenizer, prompt, s)
    worst = 0.0
    for g, w in zip(got.steps, want.steps, strict=True):
        assert g["token_id"] == w["token_id"] and g["rank"] == w["rank"] == 1
        for gc, wc in zip(g["candidates"], w["candidates"], strict=True):
            worst = max(worst, abs(gc["prob"] - wc["prob"]))
            if gc["token_id"] != wc["token_id"]:  # only a near-tie may swap places
                assert abs(gc["prob"] - wc["prob"]) < PROB_TOL
        worst = max(worst, abs(g["prob"] - w["prob"]))
    assert worst < PROB_TOL


def test_sampling_with_a_seed_is_repeatable(server, lm):
    s = {"strategy": "sample", "temperature": 0.9, "top_p": 0.95, "max_new_tokens": 24, "seed": 1234}
    a = remote.decode(server, lm.tokenizer, "The weather today", s)
    b = remote.decode(server, lm.tokenizer, "The weather today", s)
    other = remote.decode(server, lm.tokenizer, "The weather today", {**s, "seed": 99})
    assert a.outputs[0]["token_ids"] == b.outputs[0]["token_ids"] and a.settings["seed"] == 1234
    assert other.outputs[0]["token_ids"] != a.outputs[0]["token_ids"]
    for step in a.steps:  # the table's p is the model's own (raw) probability of the drawn token
        assert 0 < step["prob"] <= 1


def test_decode_through_the_role_runs_on_the_server(server_url, monkeypatch):
    from backend import decoding

    monkeypatch.setenv("TLAB_GENERATION_URL", server_url)
    remote.forget()
    data = decoding.decode("Once upon a time", {"max_new_tokens": 16})
    assert data["engine"] == {"kind": "vllm", "url": server_url, "model": "HuggingFaceTB/SmolLM2-135M-Instruct"}
    assert data["model"]["checkpoint"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and data["model"]["source"] == "package"
    assert data["n_new_tokens"] == 16 and data["tokens_per_s"] > 0


def test_server_down_gives_a_clear_message_and_runs_in_process(monkeypatch):
    import socket

    from backend import decoding

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("TLAB_GENERATION_URL", url)
    remote.forget()
    data = decoding.decode("Once upon a time", {"max_new_tokens": 4})
    assert data["engine"]["kind"] == "in-process"
    assert data["engine"]["note"] == f"The generation server at {url} did not answer (connection refused); this ran in-process."
    assert data["warnings"][0] == data["engine"]["note"] and data["n_new_tokens"] == 4


def test_app_started_with_the_server_serves_decode_from_it(server_url, server_app):
    from gradio_client import Client

    client = Client(server_app, verbose=False)
    r = client.predict("Once upon a time", {"strategy": "greedy", "max_new_tokens": 8}, api_name="/decode")
    assert r["engine"]["kind"] == "vllm" and r["engine"]["url"] == server_url
    assert r["n_new_tokens"] == 8 and r["steps"][0]["candidates"]
    beam = client.predict("Once upon a time", {"strategy": "beam", "num_beams": 2, "max_new_tokens": 4},
                          api_name="/decode")
    assert beam["engine"]["kind"] == "in-process" and "Beam search" in beam["engine"]["note"]
    *_, gen = client.predict("Once upon a time", "greedy", 8, 0.7, 50, 0.9, 4, 0, "", api_name="/generate_text")
    assert gen["engine"]["kind"] == "vllm" and gen["decoding"]["n_new_tokens"] == 8
    *_, summary = client.predict(SUMMARY_TEXT, 24, 10, 0, "", "", api_name="/summarize")
    assert summary["engine"]["kind"] == "vllm" and summary["summary"]


SUMMARY_TEXT = ("The Eiffel Tower is 330 metres tall. It was the tallest man-made structure in the world for 41 "
                "years until the Chrysler Building in New York City was finished in 1930. A broadcasting aerial "
                "was added at the top of the tower in 1957.")
PASSAGES = [{"title": "Tokenizer", "text": "A tokenizer splits text into tokens and maps each token to an id "
                                           "in the model's vocabulary."},
            {"title": "Embedding", "text": "An embedding layer turns token ids into vectors."}]


@pytest.fixture
def on_server(server_url, monkeypatch):
    """Flip the app's generation between the server and this process, as TLAB_GENERATION_URL does."""
    def flip(up: bool) -> None:
        if up:
            monkeypatch.setenv("TLAB_GENERATION_URL", server_url)
        else:
            monkeypatch.delenv("TLAB_GENERATION_URL", raising=False)
        remote.forget()
    yield flip
    remote.forget()


def test_the_instruct_fallbacks_on_the_server_write_the_in_process_text(on_server):
    from backend import pipelines

    on_server(True)
    summary = pipelines.summarize(SUMMARY_TEXT, max_new_tokens=32, min_new_tokens=10)
    translation = pipelines.translate("The cat sleeps on the warm windowsill.", "en", "de", max_new_tokens=24)
    on_server(False)
    here_summary = pipelines.summarize(SUMMARY_TEXT, max_new_tokens=32, min_new_tokens=10)
    here_translation = pipelines.translate("The cat sleeps on the warm windowsill.", "en", "de", max_new_tokens=24)
    assert summary["engine"]["kind"] == "vllm" and here_summary["engine"] == {"kind": "in-process"}
    assert "server at" in summary["model"]["device"] and summary["method"] == "instruct-fallback"
    assert summary["summary"] == here_summary["summary"] and summary["output_tokens"] == here_summary["output_tokens"]
    assert translation["translation"] == here_translation["translation"] and translation["engine"]["kind"] == "vllm"


def test_the_corpus_reader_on_the_server_writes_the_in_process_answer(on_server):
    from backend import hub
    from backend.search import api as search_api
    from backend.search import reader

    on_server(True)
    got = search_api._read_on_server("What does a tokenizer do?", PASSAGES, lambda *a: None)
    lm = hub.load(search_api._generative_role())  # the decoder, where the reader trained here serves qa
    want = reader.read(lm.model, lm.tokenizer, lm.method, "What does a tokenizer do?", PASSAGES)
    assert got["engine"]["kind"] == "vllm" and got["answer"] == want["answer"] and got["cited"] == want["cited"]
