"""Decode by hand on a tiny random llama (real SmolLM2 tokenizer): the path's log-prob equals a
plain teacher-forced forward, ranks and the top-k are the model's, continuing greedily equals
greedy's prefix, a seeded sample repeats, and hostile input is refused readably."""

from __future__ import annotations

import json

import pytest
import torch

from backend import decoding
from backend.decoding import by_hand as bh
from backend.engines.generation import generate
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import save_tiny, smollm2_tokenizer, tiny_llama

PROMPT = "Transformers are the"
PEAKED = {"initializer_range": 0.5, "max_position_embeddings": 256}


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def tiny(tok):
    return tiny_llama(seed=0, pad_token_id=tok.eos_token_id, **PEAKED)


def forced_logprobs(model, ids: list[int], plen: int) -> torch.Tensor:
    """An independent check: the whole sequence through the plain forward, all positions."""
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    return torch.stack([logp[i - 1, ids[i]] for i in range(plen, len(ids))])


def test_hand_path_logprob_equals_teacher_forced_forward(tiny, tok):
    first = bh.by_hand(tiny, tok, PROMPT, [], top_k=5)
    second = first["candidates"][1]["token_id"]  # not greedy's choice
    out = bh.by_hand(tiny, tok, PROMPT, [second, 42, " the"], top_k=5)
    ids = out["prompt_token_ids"] + out["path_token_ids"]
    want = forced_logprobs(tiny, ids, len(out["prompt_token_ids"]))
    assert out["path_token_ids"][:2] == [second, 42]
    assert out["path_logprob"] == pytest.approx(float(want.sum()), abs=1e-4)
    assert [s["logprob"] for s in out["steps"]] == pytest.approx(want.tolist(), abs=1e-4)
    assert out["steps"][0]["rank"] == 2 and out["steps"][0]["in_top_k"]
    # the candidates for step 1 were the model's top 5, best first, probabilities summing to <= 1
    probs = [c["prob"] for c in first["candidates"]]
    assert probs == sorted(probs, reverse=True) and sum(probs) <= 1 + 1e-6
    json.dumps(out)


def test_ranks_and_leaving_the_top_k(tiny, tok):
    base = bh.by_hand(tiny, tok, PROMPT, [], top_k=3)
    with torch.no_grad():
        logits = tiny(input_ids=torch.tensor([base["prompt_token_ids"]])).logits[0, -1]
    order = torch.argsort(logits, descending=True).tolist()
    assert [c["token_id"] for c in base["candidates"]] == order[:3]
    pick = order[10]  # the model's 11th choice for step 1
    out = bh.by_hand(tiny, tok, PROMPT, [pick, order[0]], top_k=3)
    assert out["steps"][0]["rank"] == 11 and not out["steps"][0]["in_top_k"]
    # step 2's rank is relative to the context after step 1's token: check it there
    with torch.no_grad():
        nxt = tiny(input_ids=torch.tensor([base["prompt_token_ids"] + [pick]])).logits[0, -1]
    assert out["steps"][1]["rank"] == int((nxt > nxt[order[0]]).sum()) + 1
    assert out["left_top_k"][0] == 1 and out["left_top_k"] == [s["step"] for s in out["steps"] if s["rank"] > 3]
    assert "left the top 3 at step" in out["summary"]


def test_continue_greedily_equals_greedy_and_its_logprob(tiny, tok):
    greedy = generate.decode(tiny, tok, PROMPT, {"strategy": "greedy", "max_new_tokens": 6})
    ids = greedy.outputs[0]["token_ids"]
    out = bh.by_hand(tiny, tok, PROMPT, ids[:2], action="greedy", n=4)
    assert out["path_token_ids"] == ids[:6]
    assert [s["by"] for s in out["steps"]] == ["path"] * 2 + ["greedy"] * 4
    assert out["greedy"]["token_ids"] == ids[:6]
    assert out["path_logprob"] == out["greedy"]["logprob"]  # the same path, scored the same way
    assert out["path_logprob"] == pytest.approx(greedy.sequence_logprob, abs=1e-4)
    assert out["left_top_k"] == [] and all(s["rank"] == 1 for s in out["steps"])


def test_a_hand_detour_scores_below_greedy(tiny, tok):
    base = bh.by_hand(tiny, tok, PROMPT, [], top_k=5)
    second = base["candidates"][1]["token_id"]
    out = bh.by_hand(tiny, tok, PROMPT, [second], action="greedy", n=3)
    assert out["path_token_ids"][0] == second and out["greedy"]["n_tokens"] == len(out["path_token_ids"])
    # greedy is not optimal in general, but its first step is: the detour loses log-prob there
    assert out["steps"][0]["logprob"] < base["candidates"][0]["logprob"]


def test_sampling_repeats_with_its_seed_and_is_reported(tiny, tok):
    a = bh.by_hand(tiny, tok, PROMPT, [], action="sample", n=5, seed=7)
    b = bh.by_hand(tiny, tok, PROMPT, [], action="sample", n=5, seed=7)
    c = bh.by_hand(tiny, tok, PROMPT, [], action="sample", n=5, seed=8)
    assert a["path_token_ids"] == b["path_token_ids"] and a["seed"] == 7
    assert a["path_token_ids"] != c["path_token_ids"]
    assert all(s["by"] == "sample" for s in a["steps"])
    d = bh.by_hand(tiny, tok, PROMPT, [], action="sample", n=2)  # no seed: one is picked and reported
    assert isinstance(d["seed"], int)


def test_typed_tokens_and_json_text(tiny, tok):
    the = tok(" the", add_special_tokens=False)["input_ids"][0]
    assert bh.parse_path(tok, '[" the", 12]', 100_000) == [the, 12]
    assert bh.parse_path(tok, ["Ġthe"], 100_000) == [the]  # the raw piece
    seven = tok("7", add_special_tokens=False)["input_ids"]
    assert len(seven) == 1 and bh.parse_path(tok, ["7", 7], 100_000) == [seven[0], 7]  # a string is text, a number an id
    assert bh.parse_path(tok, None, 10) == [] and bh.parse_path(tok, " ", 10) == []


@pytest.mark.parametrize("path, message", [
    ([10**9], "path step 1"),
    ([-1], "path step 1"),
    ([1.5], "path step 1"),
    ([[1]], "path step 1"),
    ([None], "path step 1"),
    ([" unbelievably tokenised"], "not one"),
    (list(range(bh.MAX_PATH + 1)), f"at most {bh.MAX_PATH}"),
    ("[" * 5000, "nested"),
    ("{not json", "JSON list"),
    ({"a": 1}, "must be a list"),
    (["x" * 500], "characters"),
])
def test_hostile_paths_are_refused_readably(tiny, tok, path, message):
    with pytest.raises(InputError, match=message):
        bh.by_hand(tiny, tok, PROMPT, path)


@pytest.mark.parametrize("kw, message", [
    ({"top_k": 0}, "top_k"), ({"top_k": 10**6}, "top_k"), ({"action": "beam"}, "action"),
    ({"n": 0}, "n"), ({"n": 1000}, "n"), ({"seed": -3}, "seed"), ({"seed": "abc"}, "seed"),
])
def test_bad_knobs_are_refused(tiny, tok, kw, message):
    with pytest.raises(InputError, match=message):
        bh.by_hand(tiny, tok, PROMPT, [], **kw)


def test_a_full_path_cannot_grow(tiny, tok):
    with pytest.raises(InputError, match="already has"):
        bh.by_hand(tiny, tok, PROMPT, [5] * bh.MAX_PATH, action="greedy", n=2)


# ----------------------------------------------------------------------------- the role-level entry point


@pytest.fixture(scope="module")
def folder(tiny, tok, tmp_path_factory):
    return save_tiny(tiny, tok, tmp_path_factory.mktemp("by-hand") / "tiny-llama")


def test_api_serves_the_role_and_equals_the_model_level_call(tiny, tok, folder, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folder))
    data = decoding.decode_by_hand(PROMPT, "[504]", 4, "greedy", 3)
    assert data["model"]["role"] == "decoder" and data["model"]["checkpoint"] == str(folder)
    want = bh.by_hand(tiny, tok, PROMPT, [504], 4, "greedy", 3)
    assert {k: v for k, v in data.items() if k != "model"} == want
    json.dumps(data)


def test_api_refuses_before_loading(monkeypatch):
    monkeypatch.setenv("TLAB_MODEL_DECODER", "/nonexistent/never-loaded")
    for args in [("", []), (PROMPT, list(range(500))), (PROMPT, [], 0), (PROMPT, [], 5, "jump")]:
        with pytest.raises(InputError):
            decoding.decode_by_hand(*args)
