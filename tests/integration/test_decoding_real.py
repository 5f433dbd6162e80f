"""Decoding with the real decoder (SmolLM2-135M-Instruct under the local profile)."""

from __future__ import annotations

import json

import pytest

from backend import decoding, hub
from backend.engines.generation.generate import decode, step_distribution

PROMPTS = [
    "Transformers are the",
    "The capital of France is",
    "In a shocking finding, scientist discovered a herd of unicorns living in a remote valley.",
]


@pytest.fixture(scope="module")
def lm():
    """The packaged decoder; `make test` installs it, so failing to load it is a failure."""
    return hub.load("decoder")


def test_role_entry_point_serves_the_packaged_decoder(lm):
    s = {"strategy": "greedy", "max_new_tokens": 8}
    data = decoding.decode(PROMPTS[0], s)
    assert data["model"]["role"] == "decoder" and data["model"]["checkpoint"] == lm.checkpoint
    assert data["outputs"][0]["token_ids"] == decode(lm.model, lm.tokenizer, PROMPTS[0], s).outputs[0]["token_ids"]


def test_greedy_is_deterministic(lm):
    s = {"strategy": "greedy", "max_new_tokens": 16}
    a = decode(lm.model, lm.tokenizer, PROMPTS[0], s)
    b = decode(lm.model, lm.tokenizer, PROMPTS[0], s)
    assert a.outputs[0]["token_ids"] == b.outputs[0]["token_ids"]
    assert a.text == b.text and a.text.strip()
    assert a.sequence_logprob == pytest.approx(b.sequence_logprob, abs=1e-4)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_best_beam_logprob_at_least_greedy(lm, prompt):
    # Beam search maximises the (length-normalised) sum of log-probs; with length_penalty 0 the
    # score is the plain sum, so the best beam can never score below the greedy path.
    n = 12
    greedy = decode(lm.model, lm.tokenizer, prompt, {"strategy": "greedy", "max_new_tokens": n})
    beam = decode(lm.model, lm.tokenizer, prompt,
                  {"strategy": "beam", "num_beams": 4, "max_new_tokens": n, "length_penalty": 0.0})
    if greedy.finish_reason == "length" and beam.finish_reason == "length":
        assert beam.n_new_tokens == greedy.n_new_tokens == n
    assert beam.sequence_logprob >= greedy.sequence_logprob - 1e-3


def test_step_probabilities_sum_to_at_most_one_and_chosen_is_listed(lm):
    for settings in (
        {"strategy": "greedy", "max_new_tokens": 12, "top_n": 10},
        {"strategy": "sample", "max_new_tokens": 12, "top_p": 0.9, "top_k": 50, "seed": 7, "top_n": 10},
        {"strategy": "beam", "num_beams": 3, "max_new_tokens": 12, "top_n": 10},
    ):
        res = decode(lm.model, lm.tokenizer, PROMPTS[0], settings)
        assert res.steps, settings
        for step in res.steps:
            total = sum(c["prob"] for c in step["candidates"])
            assert total <= 1.0 + 1e-5
            assert 0 < step["prob"] <= 1
            if step["rank"] <= 10:  # in the table exactly when it ranks within top_n
                listed = [c["token_id"] for c in step["candidates"]]
                assert step["token_id"] == listed[step["rank"] - 1]
            if settings["strategy"] == "greedy":
                assert step["rank"] == 1
            if "survivors" in step:
                assert 1 <= step["survivors"] <= 50
                assert sum(c["prob_after_cut"] for c in step["candidates"]) <= 1.0 + 1e-5
        json.dumps(res.to_dict())


def test_beam_tree_best_path_matches_output(lm):
    res = decode(lm.model, lm.tokenizer, PROMPTS[2], {"strategy": "beam", "num_beams": 4, "max_new_tokens": 10})
    best = sorted((n for n in res.beam_tree["nodes"] if n["best"]), key=lambda n: n["depth"])
    assert len(best) - 1 == res.n_new_tokens or res.finish_reason == "eos"
    assert best[-1]["cum_logprob"] == pytest.approx(res.sequence_logprob, abs=1e-2)


def test_temperature_overlay_on_the_real_model(lm):
    ids = lm.tokenizer(PROMPTS[0])["input_ids"]
    dist = step_distribution(lm.model, lm.tokenizer, ids, temperatures=(0.5, 1.0, 2.0), top_p=0.9)
    h = [t["entropy"] for t in dist["temperatures"]]
    assert h[0] < h[1] < h[2]
    top = [t["probs"][0] for t in dist["temperatures"]]
    assert top[0] > top[1] > top[2]  # a colder distribution is peakier
    survivors = [t["survivors_top_p"] for t in dist["temperatures"]]
    assert survivors[0] <= survivors[1] <= survivors[2]


def test_chat_template_answers(lm):
    res = decode(lm.model, lm.tokenizer, "What is the capital of France?",
                 {"strategy": "greedy", "max_new_tokens": 24, "chat_template": True})
    assert "<|im_start|>assistant" in res.prompt_text
    assert "Paris" in res.text


def test_int8_playground_run_shows_both_models_probabilities(lm):
    s = {"strategy": "greedy", "max_new_tokens": 12, "precision": "int8"}
    data = decoding.decode(PROMPTS[1], s)
    fp32 = decoding.decode(PROMPTS[1], {**s, "precision": "fp32"})
    assert data["model"]["dtype"].startswith("int8") and data["label"] == "greedy int8"
    steps = data["steps"]
    assert len(steps) == data["n_new_tokens"] >= 1
    assert all(st["prob_int8"] == st["prob"] and 0 < st["prob_fp32"] <= 1 for st in steps)
    # the int8 copy keeps SmolLM2's distribution close: per-step probabilities of the same tokens
    assert sum(abs(st["prob_int8"] - st["prob_fp32"]) for st in steps) / len(steps) < 0.05
    # and the first greedy tokens are the fp32 model's (the Efficiency bench: 20/20 prompts on 8 tokens)
    assert data["outputs"][0]["token_ids"][:4] == fp32["outputs"][0]["token_ids"][:4]
