"""Fill-mask by a decoder scores its candidates in bounded pieces: a long text goes through a key/value cache in
chunks, each candidate alone, and gives the same scores as the whole rows read at once."""

from __future__ import annotations

import pytest

from backend.pipelines import decoder_mask
from backend.runtime import budget
from backend.runtime.memory_budget import Shape
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return tiny_llama(seed=3, pad_token_id=tok.eos_token_id)


TEXT = ("The old harbour was rebuilt after the storm, and the [MASK] came back to the quay within a year. "
        + "Fishing boats and ferries now share the water with the yachts of summer visitors. " * 6)


def _scores(r: dict) -> dict:
    return {c["token_str"]: c["sentence_logprob"] for c in r["candidates"]}


def test_the_cached_path_scores_as_the_whole_rows_do(model, tok, monkeypatch):
    whole = decoder_mask.fill_mask(model, tok, TEXT, top_k=8)
    monkeypatch.setattr(decoder_mask, "SHORT_ROW", 0)  # every text is "long": cache + chunks
    monkeypatch.setattr(decoder_mask, "PREFILL_CHUNK", 16)  # several chunks on both sides of the mask
    cached = decoder_mask.fill_mask(model, tok, TEXT, top_k=8)
    assert [c["token"] for c in cached["candidates"]] == [c["token"] for c in whole["candidates"]]
    for word, lp in _scores(whole).items():
        assert _scores(cached)[word] == pytest.approx(lp, abs=2e-3)


def test_the_cached_path_reads_no_more_than_a_chunk_at_once(model, tok, monkeypatch):
    monkeypatch.setattr(decoder_mask, "SHORT_ROW", 0)
    monkeypatch.setattr(decoder_mask, "PREFILL_CHUNK", 16)
    widest = []
    forward = model.forward

    def counting(*args, **kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        widest.append(tuple(ids.shape))
        return forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", counting)
    decoder_mask.fill_mask(model, tok, TEXT, top_k=5)
    assert max(b for b, _ in widest) == 1 and max(t for _, t in widest) <= 16


def test_a_stopped_request_ends_between_candidates(model, tok, monkeypatch):
    monkeypatch.setattr(decoder_mask, "SHORT_ROW", 0)
    with budget.scope() as b:
        b.cancel()
        with pytest.raises(budget.Cancelled):
            decoder_mask.fill_mask(model, tok, TEXT, top_k=5)


def test_scoring_memory_is_bounded_whatever_the_length():
    shape = Shape(layers=30, heads=9, kv_heads=3, head_dim=64, vocab=49152)
    assert decoder_mask.scoring_rows(shape, 5, 5) > 1  # a sentence: several rows a forward
    assert decoder_mask.scoring_rows(shape, 2000, 2000) == 0  # a long text: the cached path
    long = decoder_mask.scoring_bytes(shape, 4500, 4500, 0)
    assert long < 600 * 2**20  # the cache of 9,000 tokens and one chunk's scores, not 9,000^2 per layer
    short = decoder_mask.scoring_bytes(shape, 100, 100, decoder_mask.scoring_rows(shape, 100, 100))
    assert short <= decoder_mask.ROW_BYTES + 2**20
