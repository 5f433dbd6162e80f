"""A decode stays inside its request's budget: a run carrying more token-rows (prompt x beams or
samples) than one request may is refused up front, and scoring the returned sequences stops with the
budget instead of running past it."""

from __future__ import annotations

import time

import pytest

from backend.engines.generation import generate
from backend.engines.generation.settings import MAX_PREFILL_WORK
from backend.runtime import budget
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama
from tests.helpers.virtual_clock import installed


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return tiny_llama(seed=0, pad_token_id=tok.eos_token_id)


def test_sixteen_beams_over_a_long_prompt_are_refused_before_any_forward(model, tok, monkeypatch):
    calls = []
    monkeypatch.setattr(model, "forward", lambda *a, **k: calls.append(1))
    prompt = "word " * 2000  # ~2,000 tokens, cut to the context's room, still far over the limit x 16
    settings = {"strategy": "beam", "num_beams": 16, "num_return_sequences": 16, "max_new_tokens": 512}
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"through every step .* over this server's 4,096 per decode.*Use at most \d+ beams"):
        generate.decode(model, tok, prompt, settings)
    assert calls == [] and time.perf_counter() - start < 5


def test_the_limit_is_exact_on_token_rows(model, tok):
    prompt_ids = tok("word " * 300)["input_ids"]
    n = len(prompt_ids)
    fits = MAX_PREFILL_WORK // n
    ok = {"strategy": "beam", "num_beams": fits, "max_new_tokens": 1}
    generate.decode(model, tok, "word " * 300, ok)  # at the limit: runs
    with pytest.raises(InputError, match="token-rows"):
        generate.decode(model, tok, "word " * 300, {**ok, "num_beams": fits + 1})
    assert fits < 16


def test_beam_scoring_stops_with_the_budget_and_says_so(model, tok, monkeypatch):
    settings = {"strategy": "beam", "num_beams": 4, "num_return_sequences": 4, "max_new_tokens": 6}
    real = generate.score_sequence
    scored = []
    clock = installed(monkeypatch, budget)  # the budget's clock, moved only by the scoring: generation takes none

    def slow_score(*args, **kwargs):  # each scoring forward takes a while; the budget runs out
        scored.append(1)
        clock.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(generate, "score_sequence", slow_score)
    with budget.scope(seconds=0.4):  # generation is quick; scoring the first sequences spends the rest
        r = generate.decode(model, tok, "Once upon a time", settings)
    outs = r.outputs
    assert len(outs) == 4 and outs[0]["logprob"] is not None
    unscored = [o for o in outs if o.get("scored") is False]
    assert unscored and all(o["logprob"] is None and o["perplexity"] is None for o in unscored)
    assert len(scored) == 4 - len(unscored)
    assert any("not scored" in w for w in r.warnings)
