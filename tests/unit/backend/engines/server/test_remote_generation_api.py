"""The Decoding and Pipelines entry points with TLAB_GENERATION_URL: what goes to the server,
what stays in-process and says why, and the fallback when the server is down.

The server is the fake OpenAI-compatible server of test_remote_generation; the in-process model
is a tiny random llama with the real SmolLM2 tokenizer (served as the decoder roles' override).
"""

from __future__ import annotations

import json

import pytest

from backend import decoding, pipelines
from backend.engines.server import generation as remote
from tests.helpers.tiny_models import save_tiny, smollm2_tokenizer, tiny_llama
from tests.helpers.fake_server import MODEL, closed_port_url, serving_fake

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def folder(tok, tmp_path_factory):
    tiny = tiny_llama(seed=0, pad_token_id=tok.eos_token_id, initializer_range=0.5, max_position_embeddings=256)
    return save_tiny(tiny, tok, tmp_path_factory.mktemp("remote-api") / "tiny-llama")


@pytest.fixture
def fake(tok, folder, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folder))
    monkeypatch.setenv("TLAB_MODEL_TEXT_GENERATION", str(folder))
    yield from serving_fake(tok, monkeypatch)


def test_decode_runs_on_the_server_and_says_so(fake):
    data = decoding.decode(PROMPT, {"max_new_tokens": 8})
    assert data["engine"] == {"kind": "vllm", "url": fake.url, "model": MODEL}
    assert data["text"] == " Paris is lovely" and data["finish_reason"] == "eos"
    assert data["model"]["checkpoint"] == MODEL and "server at" in data["model"]["device"]
    assert len(fake.requests) == 1
    json.dumps(data)


def test_decode_stream_streams_from_the_server(fake):
    items = list(decoding.decode_stream(PROMPT, {"max_new_tokens": 8}))
    assert [t for t, r in items[:-1]] == [" Paris", " Paris is", " Paris is lovely", " Paris is lovely"]
    assert items[-1][1]["engine"]["kind"] == "vllm"


def test_beam_runs_in_process_with_a_visible_note(fake):
    data = decoding.decode(PROMPT, {"strategy": "beam", "num_beams": 2, "max_new_tokens": 3})
    assert data["engine"]["kind"] == "in-process" and "Beam search ran in-process" in data["engine"]["note"]
    assert data["warnings"][0] == data["engine"]["note"] and fake.requests == []


def test_server_down_falls_back_in_process_with_the_message(monkeypatch, fake):
    url = closed_port_url()
    monkeypatch.setenv("TLAB_GENERATION_URL", url)
    data = decoding.decode(PROMPT, {"max_new_tokens": 3})
    note = f"The generation server at {url} did not answer (connection refused); this ran in-process."
    assert data["engine"] == {"kind": "in-process", "note": note} and data["warnings"][0] == note
    assert data["n_new_tokens"] == 3 and data["model"]["checkpoint"].endswith("tiny-llama")


def test_server_refusing_falls_back_in_process(fake):
    fake.mode = "refuse"
    data = decoding.decode(PROMPT, {"max_new_tokens": 3})
    assert data["engine"]["kind"] == "in-process" and "refused the request" in data["engine"]["note"]


def test_compare_sends_what_it_can_and_runs_the_rest_in_process(fake):
    out = decoding.compare(PROMPT, [{"strategy": "greedy", "max_new_tokens": 4},
                                    {"strategy": "beam", "num_beams": 2, "max_new_tokens": 4}])
    kinds = [r["engine"]["kind"] for r in out["rows"]]
    assert kinds == ["vllm", "in-process"] and out["engine"]["kind"] == "mixed"
    assert "Beam search" in out["rows"][1]["warnings"][0]
    json.dumps(out)


def test_generate_text_runs_on_the_server(fake):
    r = pipelines.generate_text(PROMPT, strategy="greedy", max_new_tokens=8)
    assert r["engine"]["kind"] == "vllm" and r["completion"] == " Paris is lovely"
    assert r["generated_text"] == PROMPT + " Paris is lovely" and r["decoding"]["n_new_tokens"] == 4
    assert r["model"]["checkpoint"] == MODEL and r["seconds"] >= 0


def test_generate_text_stream_runs_on_the_server(fake):
    items = list(pipelines.generate_text_stream(PROMPT, strategy="sample", max_new_tokens=8, seed=3))
    assert [n for _, n, r in items if r is None] == [1, 2, 3, 4]
    assert items[-1][2]["engine"]["kind"] == "vllm" and fake.requests[-1]["seed"] == 3


def test_generate_text_with_the_server_down_runs_in_process_with_a_notice(monkeypatch, fake):
    monkeypatch.setenv("TLAB_GENERATION_URL", closed_port_url())
    r = pipelines.generate_text(PROMPT, max_new_tokens=3)
    assert r["engine"]["kind"] == "in-process" and "did not answer" in r["notices"][0]


def test_without_a_server_results_say_in_process_and_nothing_else(monkeypatch, fake):
    monkeypatch.delenv("TLAB_GENERATION_URL")
    data = decoding.decode(PROMPT, {"max_new_tokens": 2})
    assert data["engine"] == {"kind": "in-process"}
    assert not any("server" in w for w in data["warnings"])


def test_a_decode_for_the_server_is_not_long_work_for_the_lanes(fake):
    settings = {"max_new_tokens": 64}
    assert decoding.plan(settings).long  # the server's health is not known yet: in-process rules
    remote.server()
    assert not decoding.plan(settings).long and decoding.plan(settings).on_server
    assert decoding.plan({"strategy": "beam", "max_new_tokens": 8}).long


def test_the_stats_line_names_the_server(fake):
    from components.decoding.tables import stats_markdown

    line = stats_markdown(decoding.decode(PROMPT, {"max_new_tokens": 8}))
    assert "vllm server" in line and "top 20 candidates" in line


@pytest.mark.parametrize("settings", [{"strategy": "beam", "num_beams": 2, "max_new_tokens": 3},
                                      {"max_new_tokens": 4}, {"top_n": 20, "max_new_tokens": 2},
                                      {"no_repeat_ngram_size": 2, "max_new_tokens": 2}])
def test_a_decode_with_its_admitted_plan_says_what_an_unplanned_one_says(fake, settings):
    """One plan per request changes where nothing runs: the server, or in-process with the same note."""
    remote.server()
    planned = decoding.decode(PROMPT, settings, plan=decoding.plan(settings))
    asked_now = decoding.decode(PROMPT, settings)
    assert planned["engine"] == asked_now["engine"] and planned["warnings"] == asked_now["warnings"]


def test_a_server_down_since_admission_is_asked_again_and_the_run_says_why(fake, monkeypatch):
    """A plan made while the server was unknown or down still lets the backend try it (its health check,
    when due): a server back up is used again, one still down is named in the note."""
    url = closed_port_url()
    monkeypatch.setenv("TLAB_GENERATION_URL", url)
    remote.forget()
    settings = {"max_new_tokens": 64}
    plan = decoding.plan(settings)
    assert plan.on_server and plan.long  # may run there; long work here until it is seen up
    data = decoding.decode(PROMPT, settings, plan=plan)
    assert data["engine"]["kind"] == "in-process" and url in data["engine"]["note"]
    monkeypatch.setenv("TLAB_GENERATION_URL", fake.url)
    remote.forget()
    assert decoding.decode(PROMPT, settings, plan=decoding.plan(settings))["engine"]["kind"] == "vllm"
