"""Decode by hand with the real decoder (SmolLM2-135M-Instruct under the local profile): a hand
path's log-prob equals a plain teacher-forced forward of the same tokens within 1e-4."""

from __future__ import annotations

import pytest
import torch

from backend import decoding, hub
from backend.engines.generation.generate import decode

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def lm():
    return hub.load("decoder")


def test_hand_path_logprob_equals_the_teacher_forced_forward(lm):
    first = decoding.decode_by_hand(PROMPT, [], 5)
    assert first["model"]["checkpoint"] == lm.checkpoint
    second = first["candidates"][1]["token_id"]
    step2 = decoding.decode_by_hand(PROMPT, [second], 5)
    path = [second, step2["candidates"][1]["token_id"]]  # the 2nd candidate, twice
    out = decoding.decode_by_hand(PROMPT, path, 5, "greedy", 4)
    ids = out["prompt_token_ids"] + out["path_token_ids"]
    plen = len(out["prompt_token_ids"])
    with torch.inference_mode():
        x = torch.tensor([ids], device=lm.model.device)
        logp = torch.log_softmax(lm.model(input_ids=x).logits[0].double(), -1)
    want = [float(logp[i - 1, ids[i]]) for i in range(plen, len(ids))]
    assert out["path_logprob"] == pytest.approx(sum(want), abs=1e-4)
    assert [s["logprob"] for s in out["steps"]] == pytest.approx(want, abs=1e-4)
    assert [s["rank"] for s in out["steps"][:2]] == [2, 2]
    assert [s["by"] for s in out["steps"]] == ["path", "path"] + ["greedy"] * (len(ids) - plen - 2)


def test_greedy_comparison_is_the_decode_tabs_greedy(lm):
    out = decoding.decode_by_hand(PROMPT, [], 5, "greedy", 6)
    ref = decode(lm.model, lm.tokenizer, PROMPT, {"strategy": "greedy", "max_new_tokens": 6})
    assert out["path_token_ids"] == ref.outputs[0]["token_ids"] == out["greedy"]["token_ids"]
    assert out["path_logprob"] == pytest.approx(ref.sequence_logprob, abs=1e-4)
    assert out["left_top_k"] == []


def test_attention_rows_equal_the_steps_taken_while_generating(lm):
    out = decoding.generation_attention(PROMPT, 4, 5, 2)
    plen, ids = out["prompt_len"], out["token_ids"]
    x = torch.tensor([ids[:plen]], device=lm.model.device)
    past = None
    with torch.inference_mode():
        for i, t in enumerate(out["generated"]):
            res = lm.model(input_ids=x, past_key_values=past, use_cache=True, output_attentions=True)
            past = res.past_key_values
            want = res.attentions[5][0, 2, -1].float().tolist()
            assert out["rows"][i][: plen + i] == pytest.approx(want, abs=1e-4)
            x = torch.tensor([[t]], device=lm.model.device)
