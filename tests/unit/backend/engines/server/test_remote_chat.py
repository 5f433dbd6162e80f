"""The instruct fallbacks (summarize, translate) and the corpus reader on the generation server:
what the server is sent, the reply's shape, when it stays in-process and says why, and the
fallback when the server fails. The server is test_remote_generation's fake OpenAI-compatible
server; the roles resolve as under the local profile (the packaged SmolLM2's tokenizer).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from backend import pipelines
from backend.engines.tasks import instruct
from backend.engines.server import chat as remote_chat
from backend.engines.server import generation as remote
from backend.hub import server_models
from backend.runtime.errors import InputError
from tests.helpers.fake_server import MODEL, closed_port_url, script_for, serving_fake
from tests.helpers.fake_server import no_weights_here, TEXT

PASSAGES = [{"title": "Tokenizer", "text": "A tokenizer splits text into tokens and maps them to ids."},
            {"title": "Encoder", "text": "An encoder turns token ids into contextual vectors."}]


@pytest.fixture(scope="module")
def tok():
    from backend import hub

    return hub.tokenizer("summarization")[0]  # the role's own tokenizer, as the server path uses it


@pytest.fixture
def fake(tok, monkeypatch):
    monkeypatch.setenv("TLAB_PROFILE", "local")
    for role in ("SUMMARIZATION", "TRANSLATION", "QA"):
        monkeypatch.delenv(f"TLAB_MODEL_{role}", raising=False)
    yield from serving_fake(tok, monkeypatch)


def test_chat_sends_the_chat_template_ids_greedily_with_the_fallbacks_penalty(fake, tok):
    messages = instruct.summary_messages(TEXT)
    out = remote_chat.chat(remote.server(), tok, messages, 16, min_new_tokens=2)
    sent = fake.requests[-1]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert sent["prompt"] == tok(text, add_special_tokens=False)["input_ids"]
    assert (sent["temperature"], sent["repetition_penalty"], sent["min_tokens"], sent["max_tokens"]) == (0.0, 1.1, 2, 16)
    assert sent["logprobs"] == 1  # a reply needs only its own tokens' log-probs, not a step table's 20
    assert out["text"] == "Paris is lovely" and out["finish_reason"] == "eos" and out["warnings"] == []
    n = len(tok(" Paris is lovely", add_special_tokens=False)["input_ids"])
    assert out["new_tokens"] == n and out["prompt_tokens"] == len(sent["prompt"])  # EOS is not counted
    assert out["mean_logprob"] == pytest.approx(-0.1)


def test_chat_refuses_a_prompt_past_the_window_in_the_in_process_words(fake, tok):
    with pytest.raises(InputError, match=r"exceeds the model's 2048-token window\. Shorten the text"):
        remote_chat.chat(remote.server(), tok, instruct.summary_messages(TEXT * 50), 500)
    assert fake.requests == []


@pytest.mark.parametrize("gen,words", [({"num_beams": 3}, "Beam search ran in-process"),
                                       ({"do_sample": True}, "Sampling ran in-process")])
def test_what_the_server_would_run_differently_stays_here_with_a_reason(fake, gen, words):
    stand_in, note = server_models.server_model("summarization", None, gen)
    assert stand_in is None and words in note


def test_roles_and_overrides_the_server_does_not_serve(fake, monkeypatch):
    assert server_models.server_model("summarization", "some/model") == (None, server_models.MODEL_BOX_NOTE)
    monkeypatch.setenv("TLAB_PROFILE", "book")  # distilbart: a seq2seq summariser, not the server's decoder
    assert server_models.server_model("summarization") == (None, None)
    monkeypatch.delenv("TLAB_GENERATION_URL")
    monkeypatch.setenv("TLAB_PROFILE", "local")
    assert server_models.server_model("summarization") == (None, None)


def test_summarize_runs_on_the_server_without_loading_weights(fake, monkeypatch):
    calls = no_weights_here(monkeypatch)
    r = pipelines.summarize(TEXT, max_new_tokens=40, min_new_tokens=10)
    assert calls == [] and r["engine"] == {"kind": "vllm", "url": fake.url, "model": MODEL}
    assert r["summary"] == "Paris is lovely" and r["method"] == "instruct-fallback"
    assert r["model"]["method"] == "instruct-fallback" and "server at" in r["model"]["device"]
    assert (fake.requests[-1]["min_tokens"], fake.requests[-1]["max_tokens"]) == (10, 40)
    assert r["output_tokens"] > 0 and r["finish_reason"] == "eos"
    json.dumps(r)


def test_translate_runs_on_the_server(fake, monkeypatch):
    calls = no_weights_here(monkeypatch)
    r = pipelines.translate("The cat sleeps.", "en", "de", max_new_tokens=20)
    assert calls == [] and r["engine"]["kind"] == "vllm" and r["translation"] == "Paris is lovely"
    assert "German" in tok_text(fake.requests[-1]["prompt"])


def tok_text(ids):
    from backend import hub

    return hub.tokenizer("translation")[0].decode(ids)


def test_beam_summaries_run_in_process_and_say_why(fake, monkeypatch):
    calls = no_weights_here(monkeypatch)
    r = pipelines.summarize(TEXT, max_new_tokens=20, num_beams=2)
    assert calls == ["summarize"] and fake.requests == []
    assert r["engine"]["kind"] == "in-process" and r["notices"][0] == r["engine"]["note"]
    assert "Beam search ran in-process" in r["engine"]["note"]


@pytest.mark.parametrize("mode", ["die_mid", "refuse"])
def test_a_server_failing_before_its_reply_runs_here_with_the_message(fake, monkeypatch, mode):
    calls = no_weights_here(monkeypatch)
    fake.mode = mode
    r = pipelines.summarize(TEXT, max_new_tokens=20)
    assert calls == ["summarize"] and r["summary"] == "In-process reply."
    assert r["engine"]["kind"] == "in-process" and r["notices"][0] == r["engine"]["note"]
    assert ("did not answer" if mode == "die_mid" else "refused the request") in r["engine"]["note"]


def test_a_server_down_runs_here_with_the_message(fake, monkeypatch):
    calls = no_weights_here(monkeypatch)
    url = closed_port_url()
    monkeypatch.setenv("TLAB_GENERATION_URL", url)
    r = pipelines.translate("The cat sleeps.", max_new_tokens=10)
    assert calls == ["translate"]
    assert r["engine"]["note"] == f"The generation server at {url} did not answer (connection refused); this ran in-process."


def test_the_reader_answers_on_the_server_and_cites(fake):
    from backend.search import api as search_api

    fake.script = script_for(fake.tokenizer, "Tokens come from the tokenizer [1].")
    out = search_api._read_on_server("What does a tokenizer do?", PASSAGES, lambda *a: None)
    assert out["answer"] == "Tokens come from the tokenizer [1]." and out["cited"] == [1]
    assert out["engine"]["kind"] == "vllm" and out["model"]["role"] == "decoder" and "server at" in out["model"]["device"]
    assert out["finish_reason"] == "eos" and out["reader_method"] == "instruct-fallback"


def test_the_reader_with_the_server_down_says_why_it_reads_here(fake, monkeypatch):
    from backend.search import api as search_api

    monkeypatch.setenv("TLAB_GENERATION_URL", closed_port_url())
    out = search_api._read_on_server("What does a tokenizer do?", PASSAGES, lambda *a: None)
    assert set(out) == {"note"} and "did not answer (connection refused)" in out["note"]
