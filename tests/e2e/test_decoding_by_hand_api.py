"""`/decode_by_hand` and `/generation_attention` through gradio_client against the running app."""

from __future__ import annotations

import pytest

PROMPT = "The capital of France is"


def test_take_the_second_candidate_then_continue_greedily(client):
    r = client.predict(PROMPT, [], 5, "step", api_name="/decode_by_hand")
    assert r["path_token_ids"] == [] and len(r["candidates"]) == 5 and r["model"]["role"] == "decoder"
    second = r["candidates"][1]
    r = client.predict(prompt=PROMPT, path=[second["token"]], top_k=5, action="greedy", n=3,
                       api_name="/decode_by_hand")
    assert r["path_token_ids"][0] == second["token_id"] and r["steps"][0]["rank"] == 2
    assert [s["by"] for s in r["steps"]] == ["path"] + ["greedy"] * r["added"]
    assert r["path_logprob"] == pytest.approx(sum(s["logprob"] for s in r["steps"]), abs=1e-5)
    assert r["greedy"]["n_tokens"] == len(r["path_token_ids"]) and r["greedy"]["logprob"] >= r["path_logprob"] - 5


def test_generation_attention_rows_grow(client):
    a = client.predict(PROMPT, 4, -1, "mean", api_name="/generation_attention")
    plen = a["prompt_len"]
    assert len(a["rows"]) == len(a["generated"]) <= 4
    for i, row in enumerate(a["rows"]):
        assert sum(row[: plen + i]) == pytest.approx(1.0, abs=1e-3) and all(c is None for c in row[plen + i:])


@pytest.mark.parametrize("args, message", [
    ((PROMPT, [10**9]), "path step 1"),
    ((PROMPT, list(range(500))), "at most 64"),
    ((PROMPT, "[" * 5000), "nested"),
    ((PROMPT, [" unbelievably tokenised"]), "not one"),
    ((PROMPT, [], 0), "top_k"),
    ((PROMPT, [], 5, "beam"), "action"),
    ((PROMPT, [], 5, "greedy", 999), "n must be"),
    (("", []), "prompt"),
])
def test_by_hand_bad_input_gets_a_clear_message(client, args, message):
    with pytest.raises(Exception) as err:
        client.predict(*args, api_name="/decode_by_hand")
    assert message in str(err.value) and "Traceback" not in str(err.value)


@pytest.mark.parametrize("args, message", [
    ((PROMPT, 4, 99), "layer must be between"), ((PROMPT, 4, -1, 50), "head must be between"),
    ((PROMPT, 99), "n must be"),
])
def test_generation_attention_bad_input(client, args, message):
    with pytest.raises(Exception) as err:
        client.predict(*args, api_name="/generation_attention")
    assert message in str(err.value)
