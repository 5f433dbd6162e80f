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
    from backend.attribution import methods, tasks

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
