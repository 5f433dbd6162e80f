"""The decoder's removals on the real SmolLM2: reusing the prompt's cached keys and values gives the
numbers of recomputing each shortened prompt whole, and occlusion's score for a token is the change
in the next token's probability when the prompt is run again without it."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

PROMPT = "The hotel was close to the station and the staff were friendly, but the room was small and the"


@pytest.fixture(scope="module")
def decoder():
    old = os.environ.get("TLAB_PROFILE")
    os.environ["TLAB_PROFILE"] = "local"
    from backend import hub

    yield hub.load("decoder")
    if old is None:
        os.environ.pop("TLAB_PROFILE", None)
    else:
        os.environ["TLAB_PROFILE"] = old


def test_cached_prefix_removals_equal_whole_prompts_on_the_real_decoder(decoder):
    from backend.why import methods, tasks

    t, info = tasks.next_token(decoder.model, decoder.tokenizer, PROMPT)
    assert t.prefix_score is not None
    occ = methods.occlusion(t)
    rng = np.random.default_rng(0)
    keep = rng.random((12, len(t.positions))) > 0.3
    keep[:6, :-6] = True  # rows that remove only late tokens: long shared beginnings
    cached = t.scores_without(keep)
    t.prefix_score = None
    assert np.allclose(cached, t.scores_without(keep), atol=2e-5)
    target = info["target"]["id"]
    for i in (0, len(t.ids) // 2, len(t.ids) - 2):
        short = t.ids[:i] + t.ids[i + 1:]
        with torch.no_grad():
            p = decoder.model(input_ids=torch.tensor([short])).logits[0, -1].float().softmax(-1)[target]
        assert occ[t.positions.index(i)] == pytest.approx(t.value() - float(p), abs=2e-5)


def test_a_128_token_prompt_is_explained_with_the_numbers_of_whole_prompts(decoder):
    """At the decoder's limit (128 tokens): the LM head read at the last position gives the plain forward's
    probability, and the removals, batched with each row's own cached prefix, give the numbers of running
    each shortened prompt whole (rows that remove one token, late tokens, and many tokens)."""
    from backend.why import tasks

    tok = decoder.tokenizer
    prompt = tok.decode(tok(PROMPT * 8)["input_ids"][:tasks.DECODER_MAX_TOKENS])
    t, info = tasks.next_token(decoder.model, tok, prompt)
    assert len(t.ids) == 128 == tasks.DECODER_MAX_TOKENS and t.prefix_score is not None
    target = info["target"]["id"]
    with torch.no_grad():
        plain = decoder.model(input_ids=torch.tensor([t.ids])).logits[0, -1].float().softmax(-1)[target]
    assert t.value() == pytest.approx(float(plain), abs=2e-5)
    n = len(t.positions)
    rng = np.random.default_rng(1)
    keep = np.ones((12, n), dtype=bool)
    for r, i in enumerate((0, 40, 90, n - 2, n - 1)):
        keep[r, i] = False  # occlusion's rows
    keep[5:9, 100:] = rng.random((4, n - 100)) > 0.5  # late removals: long cached beginnings
    keep[9:] = rng.random((3, n)) > 0.6  # the deletion check's random orders: many tokens gone
    cached = t.scores_without(keep)
    t.prefix_score = None
    whole = t.scores_without(keep)
    assert np.allclose(cached, whole, atol=2e-5), np.abs(cached - whole).max()
    for r, i in ((0, t.positions[0]), (2, t.positions[90])):  # rows 0 and 2 remove token 0 and token 90
        with torch.no_grad():
            p = decoder.model(input_ids=torch.tensor([t.ids[:i] + t.ids[i + 1:]])).logits[0, -1].float().softmax(-1)
        assert cached[r] == pytest.approx(float(p[target]), abs=2e-5)
