"""The prompt read in chunks (backend/engines/generation/prefill.py) gives what one `generate` gives,
and Stop or the budget reaches it between chunks."""

from __future__ import annotations

import threading

import pytest
import torch

from backend.engines.generation import generate, prefill
from backend.runtime import budget
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return tiny_llama(seed=1, pad_token_id=tok.eos_token_id)


PROMPT = "The harbour was built in the last century and the town grew around it. " * 12  # ~190 tokens


@pytest.mark.parametrize("settings", [
    {"strategy": "greedy", "max_new_tokens": 10},
    {"strategy": "sample", "max_new_tokens": 10, "top_k": 20, "seed": 3, "num_return_sequences": 2},
    {"strategy": "beam", "num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 8, "min_new_tokens": 4},
])
def test_chunked_prompt_gives_the_same_tokens_as_one_generate(model, tok, monkeypatch, settings):
    whole = generate.decode(model, tok, PROMPT, settings)
    monkeypatch.setattr(prefill, "PREFILL_CHUNK", 16)
    chunks = []
    real = model.forward

    def counting(*args, **kwargs):
        ids = kwargs.get("input_ids")
        chunks.append(None if ids is None else ids.shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "forward", counting)
    prefilled = generate.decode(model, tok, PROMPT, settings, )
    assert [o["token_ids"] for o in prefilled.outputs] == [o["token_ids"] for o in whole.outputs]
    assert prefilled.sequence_logprob == pytest.approx(whole.sequence_logprob, abs=1e-4)
    first = [s for s in chunks if s is not None][0]
    assert first == (1, 16), first  # the prompt went in 16 tokens at a time, at batch 1


def test_prefilled_repeats_the_cache_for_every_beam(model, tok):
    ids = torch.tensor([tok(PROMPT)["input_ids"]])
    cache = prefill.prefilled(model, ids, width=4, chunk=32)
    assert cache is not None and cache.get_seq_length() == ids.shape[1] - 1
    assert cache.layers[0].keys.shape[0] == 4


def test_a_prompt_within_one_chunk_is_left_to_generate(model, tok):
    ids = torch.tensor([tok("A short prompt.")["input_ids"]])
    assert prefill.prefilled(model, ids, chunk=64) is None


def test_stop_between_chunks_ends_the_decode_with_no_token(model, tok, monkeypatch):
    monkeypatch.setattr(prefill, "PREFILL_CHUNK", 16)
    stop = threading.Event()
    real = model.forward
    calls = []

    def stop_after_two(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            stop.set()  # the learner presses Stop while the prompt is being read
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "forward", stop_after_two)
    res = generate.decode(model, tok, PROMPT, {"strategy": "greedy", "max_new_tokens": 10}, stop_event=stop)
    assert len(calls) == 2 and res.n_new_tokens == 0 and res.finish_reason == "stopped"


def test_a_cancelled_request_stops_the_prompt_read(model, tok, monkeypatch):
    monkeypatch.setattr(prefill, "PREFILL_CHUNK", 16)
    with budget.scope(seconds=60) as b:
        b.cancel()
        ids = torch.tensor([tok(PROMPT)["input_ids"]])
        with pytest.raises(prefill.PrefillStopped, match="read 0 of"):
            prefill.prefilled(model, ids, chunk=16)
