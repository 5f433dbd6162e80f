"""The generation-server client against a fake OpenAI-compatible server on a real socket.

The fake speaks vLLM's wire format (`/health`, `/v1/models`, `/tokenize`, streamed
`/v1/completions` with `return_tokens_as_token_ids`), records each request, and plays a script
of steps. The tests check the request the server gets (token ids, every sampling knob), the
mapping of its answer onto the in-process result shape, and every way it can fail: refused,
down, slow, dying mid-stream, another tokenizer, the time budget.
"""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backend.engines.server import generation as remote
from backend.engines.generation.settings import DecodeSettings
from backend.engines.generation.setup import build_prompt
from backend.runtime import budget as budgets
from tests.helpers.tiny_models import smollm2_tokenizer
from tests.helpers.fake_server import closed_port_url, MODEL, serving_fake


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture
def fake(tok, monkeypatch):
    yield from serving_fake(tok, monkeypatch)


# ----------------------------------------------------------------------------- health and routing


def test_health_reads_the_model_and_caches(fake):
    eng = remote.server(fake.url)
    assert eng.info() == {"kind": "vllm", "url": fake.url, "model": MODEL}
    assert eng.context_limit() == 2048 and eng.max_logprobs == 20
    remote.server(fake.url)
    assert fake.health_calls == 1  # checked at most every UP_TTL_S
    assert remote.last_known_up(fake.url)


def test_a_down_server_is_a_readable_message_and_is_not_asked_again_at_once(monkeypatch):
    from backend.engines.server import client as remote_server

    url = closed_port_url()
    remote.forget()
    with pytest.raises(remote.ServerUnavailable, match=r"did not answer \(connection refused\); this ran in-process"):
        remote.server(url)
    asked = []
    monkeypatch.setattr(remote_server, "probe", lambda *a, **k: asked.append(a) or pytest.fail("asked again"))
    with pytest.raises(remote.ServerUnavailable, match="connection refused"):
        remote.server(url)  # the cached verdict: no second network call, so no second time-out
    assert asked == []
    assert not remote.last_known_up(url)


def test_a_slow_health_check_times_out_quickly(fake):
    fake.mode = "slow_health"
    start = time.perf_counter()
    with pytest.raises(remote.ServerUnavailable, match="no answer within the time-out"):
        remote.server(fake.url)
    assert time.perf_counter() - start < 1.4  # TLAB_GENERATION_TIMEOUT_S=0.5, not the server's 1.5 s


@pytest.mark.parametrize("settings,words", [
    ({"strategy": "beam", "num_beams": 3}, "Beam search ran in-process"),
    ({"precision": "int8"}, "int8 run ran in-process"),
    ({"no_repeat_ngram_size": 2}, "No-repeat n-gram blocking ran in-process"),
])
def test_what_the_server_cannot_do_is_planned_in_process_with_a_reason(fake, settings, words):
    eng, note = remote.plan("decoder", DecodeSettings.from_dict(settings))
    assert eng is None and words in note


def test_more_candidates_than_max_logprobs_stay_in_process():
    assert "at most 5" in remote.in_process_reason(DecodeSettings(top_n=6), max_logprobs=5)


def test_plan_without_a_server_says_nothing(monkeypatch):
    monkeypatch.delenv("TLAB_GENERATION_URL", raising=False)
    assert remote.plan("decoder", DecodeSettings()) == (None, None)


def test_plan_routes_greedy_and_sampling_but_not_other_roles_or_model_box_models(fake):
    assert remote.plan("decoder", DecodeSettings())[0].model == MODEL
    assert remote.plan("text_generation", DecodeSettings(strategy="sample", seed=1))[0] is not None
    assert remote.plan("summarization", DecodeSettings()) == (None, None)
    eng, note = remote.plan("decoder", DecodeSettings(), override="gpt2")
    assert eng is None and "model box" in note


# ----------------------------------------------------------------------------- the request


@pytest.mark.parametrize("chat", [False, True])
def test_the_server_gets_the_in_process_prompt_as_token_ids(fake, tok, chat):
    s = DecodeSettings(max_new_tokens=5, chat_template=chat)
    remote.decode(remote.server(), tok, "What is the capital of France?", s)
    _, ids, _ = build_prompt(tok, "What is the capital of France?", s, 2048)
    sent = fake.requests[-1]
    assert sent["prompt"] == ids and sent["model"] == MODEL
    assert (sent["temperature"], sent["top_k"], sent["top_p"], sent["min_p"]) == (0.0, 0, 1.0, 0.0)  # greedy
    assert sent["logprobs"] == 20 and sent["return_tokens_as_token_ids"] and sent["stream"]
    assert sent["max_tokens"] == 5 and "seed" not in sent


def test_sampling_knobs_and_seed_are_sent(fake, tok):
    s = DecodeSettings(strategy="sample", temperature=0.7, top_k=40, top_p=0.9, seed=11, repetition_penalty=1.2,
                       min_new_tokens=2, num_return_sequences=2, max_new_tokens=8)
    res = remote.decode(remote.server(), tok, "Hello", s)
    sent = fake.requests[-1]
    assert {k: sent[k] for k in ("temperature", "top_k", "top_p", "seed", "repetition_penalty", "min_tokens", "n")} \
        == {"temperature": 0.7, "top_k": 40, "top_p": 0.9, "seed": 11, "repetition_penalty": 1.2, "min_tokens": 2,
            "n": 2}
    assert len(res.outputs) == 2 and res.settings["seed"] == 11


def test_a_sampled_run_without_a_seed_picks_one_and_reports_it(fake, tok):
    res = remote.decode(remote.server(), tok, "Hello", DecodeSettings(strategy="sample"))
    assert res.settings["seed"] == fake.requests[-1]["seed"] is not None
    assert any(f"seed {res.settings['seed']}" in w for w in res.warnings)


# ----------------------------------------------------------------------------- the answer


def test_the_answer_maps_onto_the_in_process_result_shape(fake, tok):
    res = remote.decode(remote.server(), tok, "The capital of France is", DecodeSettings(top_n=2))
    ids = [c for c, _, _ in fake.script]
    assert res.text == tok.decode(ids, skip_special_tokens=True) == " Paris is lovely"
    assert res.outputs[0]["token_ids"] == ids and res.outputs[0]["ended_with_eos"]
    assert res.finish_reason == "eos" and res.n_new_tokens == len(ids)
    assert res.sequence_logprob == round(-0.1 * len(ids), 4)
    assert res.perplexity == round(math.exp(0.1), 4)
    first = res.steps[0]
    assert first["prob"] == float(f"{math.exp(-0.1):.6g}") and first["rank"] == 1 and first["entropy"] is None
    assert [c["token_id"] for c in first["candidates"]] == [ids[0], 100]  # top_n=2, best first
    assert res.tokens_per_s > 0 and res.generate_seconds <= res.seconds
    assert any("top 20 candidates" in w for w in res.warnings)
    json.dumps(res.to_dict())


def test_length_finish_and_a_rank_beyond_the_returned_candidates(fake, tok):
    fake.script = [(5, -4.0, {5: -4.0, **{1000 + j: -1.0 - j * 0.01 for j in range(20)}})]
    fake.finish = "length"
    res = remote.decode(remote.server(), tok, "Hi", DecodeSettings(strategy="sample", max_new_tokens=1, seed=1))
    assert res.finish_reason == "length" and res.steps[0]["rank"] is None  # 20 better: its rank is unknown
    assert res.steps[0]["prob_after_cut"] is None and res.steps[0]["survivors"] is None


def test_stream_yields_one_growing_text_per_token_then_the_result(fake, tok):
    items = list(remote.stream(remote.server(), tok, "The capital of France is", DecodeSettings()))
    texts = [t for t, r in items if r is None]
    assert len(texts) == len(fake.script) and texts[-1] == " Paris is lovely"
    assert items[-1][1] is not None and items[-1][1].text == " Paris is lovely"


# ----------------------------------------------------------------------------- failures


def test_a_refused_request_is_unavailable_with_the_servers_words(fake, tok):
    fake.mode = "refuse"
    with pytest.raises(remote.ServerUnavailable, match="refused the request .*maximum context length"):
        remote.decode(remote.server(), tok, "Hi", DecodeSettings())


def test_a_slow_first_answer_times_out(fake, tok):
    eng = remote.server()
    fake.mode = "slow_answer"
    start = time.perf_counter()
    with pytest.raises(remote.ServerUnavailable, match="did not answer"):
        remote.decode(eng, tok, "Hi", DecodeSettings())
    assert time.perf_counter() - start < 1.4
    assert not remote.last_known_up()  # the next requests fall back at once


def test_dying_mid_stream_after_tokens_were_shown_is_a_readable_failure(fake, tok):
    fake.mode = "die_mid"
    stream = remote.stream(remote.server(), tok, "Hi", DecodeSettings())
    assert next(stream)[0] == " Paris"
    with pytest.raises(remote.ServerFailed, match="stopped after 2 tokens"):
        list(stream)


def test_dying_mid_run_when_nothing_was_shown_falls_back(fake, tok):
    fake.mode = "die_mid"
    with pytest.raises(remote.ServerUnavailable, match="did not answer"):
        remote.decode(remote.server(), tok, "Hi", DecodeSettings())


def test_another_tokenizer_is_refused(fake, tok):
    fake.mode = "other_tokenizer"
    with pytest.raises(remote.ServerUnavailable, match="other token ids"):
        remote.decode(remote.server(), tok, "Hi", DecodeSettings())


def test_a_server_without_token_ids_is_refused(fake, tok):
    fake.mode = "no_ids"
    with pytest.raises(remote.ServerUnavailable, match="does not return token ids"):
        remote.decode(remote.server(), tok, "Hi", DecodeSettings())


def test_the_time_budget_ends_the_stream_with_the_text_so_far(fake, tok):
    fake.mode = "trickle"  # one token every 0.3 s
    eng = remote.server()
    with budgets.scope(0.8):
        res = remote.decode(eng, tok, "Hi", DecodeSettings())
    assert res.finish_reason == "time budget" and 1 <= res.n_new_tokens < len(fake.script)
    assert any("time budget" in w for w in res.warnings)


def test_stop_ends_the_stream(fake, tok):
    fake.mode = "trickle"
    stop = threading.Event()
    stop.set()
    res = remote.decode(remote.server(), tok, "Hi", DecodeSettings(), stop_event=stop)
    assert res.finish_reason == "stopped" and res.n_new_tokens == 1
