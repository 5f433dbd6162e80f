"""`/decode` and `/compare_decoding` through gradio_client against the running app (local profile)."""

from __future__ import annotations

import json
import time

import pytest
from gradio_client.utils import Status

PROMPT = "Transformers are the"


def _decode(client, prompt=PROMPT, settings=None):
    return client.predict(prompt, settings, api_name="/decode")


def test_decode_greedy_returns_the_full_json(client):
    r = _decode(client, settings={"strategy": "greedy", "max_new_tokens": 8})
    assert isinstance(r, dict)
    assert r["text"].strip() and r["n_new_tokens"] == len(r["steps"]) <= 8
    assert r["model"]["role"] == "decoder" and r["model"]["checkpoint"]
    assert r["sequence_logprob"] < 0 and r["perplexity"] >= 1
    assert r["tokens_per_s"] > 0 and r["generate_seconds"] > 0
    step = r["steps"][0]
    assert step["rank"] == 1 and step["token_id"] == step["candidates"][0]["token_id"]
    assert "".join(s["token"] for s in r["steps"]) == "".join(r["outputs"][0]["tokens"])
    again = _decode(client, settings={"strategy": "greedy", "max_new_tokens": 8})
    assert again["outputs"][0]["token_ids"] == r["outputs"][0]["token_ids"]


def test_decode_defaults_and_json_text_settings(client):
    r = client.predict(prompt=PROMPT, settings='{"max_new_tokens": 4}', api_name="/decode")
    assert r["settings"]["strategy"] == "greedy" and r["n_new_tokens"] <= 4


def test_decode_beam_has_a_tree_and_several_outputs(client):
    r = _decode(client, settings={"strategy": "beam", "num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 6})
    assert len(r["outputs"]) == 2
    assert r["outputs"][0]["logprob"] == r["sequence_logprob"]
    statuses = {n["status"] for n in r["beam_tree"]["nodes"]}
    assert {"root", "kept", "pruned"} <= statuses


def test_decode_sampling_seed_is_reproducible(client):
    s = {"strategy": "sample", "top_p": 0.9, "temperature": 1.2, "max_new_tokens": 8, "seed": 7}
    a, b = _decode(client, settings=s), _decode(client, settings=s)
    assert a["outputs"][0]["token_ids"] == b["outputs"][0]["token_ids"]
    assert all(1 <= st["survivors"] for st in a["steps"])
    assert all("prob_after_cut" in c for c in a["steps"][0]["candidates"])


def test_compare_decoding_one_row_per_strategy(client):
    strategies = [
        {"strategy": "greedy", "max_new_tokens": 6},
        {"strategy": "beam", "num_beams": 2, "max_new_tokens": 6},
        {"strategy": "sample", "top_k": 50, "max_new_tokens": 6, "seed": 3},
    ]
    r = client.predict(PROMPT, strategies, api_name="/compare_decoding")
    assert [row["strategy"] for row in r["rows"]] == ["greedy", "beam 2", "sample top-k 50"]
    for row in r["rows"]:
        assert row["text"] and row["sequence_logprob"] < 0 and row["tokens_per_s"] > 0
    # distinct-2 of the greedy row is that of the very tokens /decode generates for the same settings
    ids = _decode(client, settings=strategies[0])["outputs"][0]["token_ids"]
    grams = [tuple(ids[i:i + 2]) for i in range(len(ids) - 1)]
    assert r["rows"][0]["distinct_2"] == pytest.approx(len(set(grams)) / len(grams), abs=1e-4)
    assert r["model"]["role"] == "decoder"
    as_text = client.predict(PROMPT, json.dumps(strategies[:2]), api_name="/compare_decoding")
    assert len(as_text["rows"]) == 2


def test_decode_int8_generates_with_the_quantized_copy_and_shows_both_probabilities(client):
    settings = {"strategy": "greedy", "max_new_tokens": 8, "precision": "int8"}
    r = _decode(client, settings=settings)
    assert r["label"] == "greedy int8" and r["settings"]["precision"] == "int8"
    assert r["model"]["dtype"].startswith("int8") and r["model"]["device"] == "cpu"
    assert r["precision"]["generated"] == "int8" and r["precision"]["other"] == "fp32"
    assert r["n_new_tokens"] == len(r["steps"]) >= 1
    for step in r["steps"]:
        assert step["prob_int8"] == step["prob"] and 0 < step["prob_fp32"] <= 1
        assert abs(step["prob_int8"] - step["prob_fp32"]) < 0.25  # SmolLM2's int8 stays close to fp32
    assert r["precision"]["max_abs_prob_diff"] == round(max(abs(s["prob_int8"] - s["prob_fp32"]) for s in r["steps"]), 6)
    again = _decode(client, settings=settings)  # the cached copy: deterministic, not rebuilt
    assert again["outputs"][0]["token_ids"] == r["outputs"][0]["token_ids"]
    assert again["precision"]["int8_built_s"] == 0.0
    fp32 = _decode(client, settings={"strategy": "greedy", "max_new_tokens": 8})
    assert fp32["precision"] == {"generated": "fp32", "other": None} and "prob_int8" not in fp32["steps"][0]


def test_long_prompt_is_truncated_and_said_so(client):
    r = _decode(client, prompt="hello " * 2200, settings={"max_new_tokens": 1})
    assert len(r["prompt_token_ids"]) == 2047
    assert r["truncated_prompt"] and "truncated from the left" in r["warnings"][0]


BAD = [
    ("", {}, "prompt is empty"),
    (PROMPT, {"strategy": "sample", "temperature": 0}, "choose the 'greedy' strategy"),
    (PROMPT, {"strategy": "sample", "top_p": 1.5}, "top_p must be in (0, 1]"),
    (PROMPT, {"strategy": "sample", "top_p": 0}, "top_p must be in (0, 1]"),
    (PROMPT, {"strategy": "sample", "top_k": -3}, "top_k must be 0"),
    (PROMPT, {"strategy": "beam", "num_beams": 40}, "num_beams must be between 2 and 16"),
    (PROMPT, {"strategy": "beam", "num_beams": 2, "num_return_sequences": 4}, "cannot exceed num_beams"),
    (PROMPT, {"strategy": "greedy", "num_return_sequences": 3}, "exactly one sequence"),
    (PROMPT, {"max_new_tokens": 5000}, "over the cap of 512"),
    (PROMPT, {"strategy": "sample", "seed": "lucky"}, "seed must be a whole number"),
    (PROMPT, {"strategy": "sample", "seed": 2.5}, "seed must be a whole number"),
    (PROMPT, {"strategy": "nucleus-beam"}, "Unknown strategy"),
    (PROMPT, "{not json", "not valid JSON"),
    # gradio_client's JSON cannot carry a NaN number (the fuzz tier sends one over raw HTTP): its text form
    (PROMPT, {"strategy": "greedy", "temperature": "NaN"}, "temperature must be a finite number"),
    (PROMPT, {"strategy": "greedy", "top_p": 7}, "top_p must be between 0 and 1"),
    (PROMPT, {"strategy": "greedy", "precision": "fp8"}, "precision must be one of fp32, int8"),
]


@pytest.mark.parametrize("prompt,settings,message", BAD, ids=[b[2] for b in BAD])
def test_decode_bad_input_gets_a_clear_message(client, prompt, settings, message):
    with pytest.raises(Exception) as err:
        _decode(client, prompt=prompt, settings=settings)
    text = str(err.value)
    assert message in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    "strategies,message",
    [
        ([{"strategy": "greedy"}], "2 to 4 strategies"),
        ([{"strategy": "greedy"}] * 5, "2 to 4 strategies"),
        ("[oops", "not valid JSON"),
        ([{"strategy": "greedy"}, {"strategy": "beam", "num_beams": 99}], "Strategy 2: num_beams"),
    ],
)
def test_compare_bad_input_gets_a_clear_message(client, strategies, message):
    with pytest.raises(Exception) as err:
        client.predict(PROMPT, strategies, api_name="/compare_decoding")
    assert message in str(err.value)


def test_cancelled_job_leaves_the_model_usable(client):
    job = client.submit(PROMPT, {"strategy": "greedy", "max_new_tokens": 48}, api_name="/decode")
    deadline = time.monotonic() + 60  # cancelled once the server works on it (not while it waits in the queue)
    while job.status().code not in (Status.PROCESSING, Status.ITERATING, Status.PROGRESS, Status.FINISHED):
        assert time.monotonic() < deadline, job.status()
        time.sleep(0.05)
    job.cancel()
    r = _decode(client, settings={"strategy": "greedy", "max_new_tokens": 3})
    assert r["n_new_tokens"] == 3
