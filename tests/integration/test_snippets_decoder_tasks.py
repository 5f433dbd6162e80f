"""The Pipelines tab's snippets for the runs the local profile serves with its decoder: a summary and
a translation by the instruct fallback (SmolLM2-135M-Instruct given the app's task prompt in its chat template;
greedy, repetition penalty 1.1, the run's lengths and beams) and fill-mask by the decoder (the likeliest whole
words after the left context, each put in place and the whole sentence scored). Each endpoint runs in-process on
the local profile; its snippet then runs in the session's fresh offline interpreter (snippet_runner.py) and must
give the same reply (text and token count) and the same candidates with scores within 1e-4."""

from __future__ import annotations

import pytest

from backend import pipelines, snippets
from backend.engines.tasks import instruct as ins
from backend.runtime import config

REPLY = {"reply": "reply", "rows": "out[0, prompt_len:].tolist()", "special": "sorted(tokenizer.all_special_ids)"}
CASES = [  # (name, endpoint, inputs): short replies, few words (the file's wall time)
    ("summarize", "summarize", {"text": "The parcel arrived two days late. The box was crushed and one book was torn.",
                                "max_new_tokens": 8, "min_new_tokens": 4, "num_beams": 0}),
    ("translate_beams", "translate", {"text": "The cat sleeps.", "source": "en", "target": "fr",
                                      "max_new_tokens": 6, "num_beams": 2}),
    ("fill_mask", "fill_mask", {"text": "The capital of France is [MASK].", "top_k": 3}),
]
TAKE = {"summarize": REPLY, "translate_beams": REPLY, "fill_mask": {"candidates": "candidates"}}


@pytest.fixture(scope="module")
def runs():
    return {name: (endpoint, inputs, getattr(pipelines, endpoint)(**inputs)) for name, endpoint, inputs in CASES}


@pytest.fixture(scope="module")
def reproduced(runs, snippet_runner):
    return snippet_runner.run([{"name": name, "python": snippets.for_result(endpoint, inputs, result)["python"],
                                "take": TAKE[name]} for name, (endpoint, inputs, result) in runs.items()])


def test_the_runs_are_the_decoders(runs):
    methods = {name: result["model"]["method"] for name, (_, _, result) in runs.items()}
    assert methods == {"summarize": config.METHOD_INSTRUCT, "translate_beams": config.METHOD_INSTRUCT,
                       "fill_mask": config.METHOD_DECODER_MASK}
    for name, (endpoint, inputs, result) in runs.items():
        python = snippets.for_result(endpoint, inputs, result)["python"]
        assert "not this run's" not in python and "pipeline(" not in python, name
        assert 'gguf_file="' in python and "# What the app adds:" in python, name


@pytest.mark.parametrize("name", ["summarize", "translate_beams"])
def test_instruct_snippets_give_the_apps_reply(runs, reproduced, name):
    _, _, result = runs[name]
    got = reproduced[name]
    assert got["reply"] == result["raw_output"]
    assert sum(t not in got["special"] for t in got["rows"]) == result["output_tokens"]
    shown = result["summary"] if name == "summarize" else result["translation"]
    assert ins.parse_free_text(got["reply"]) == shown  # the app's one post-processing step, said in the snippet


def test_fill_mask_snippet_gives_the_apps_candidates(runs, reproduced):
    app = runs["fill_mask"][2]["candidates"]
    got = reproduced["fill_mask"]["candidates"]
    assert [c["token_str"] for c in got] == [c["token_str"] for c in app]
    assert [c["left_rank"] for c in got] == [c["left_rank"] for c in app]
    for mine, theirs in zip(got, app):
        for key in ("score", "sentence_logprob", "left_logprob"):
            assert mine[key] == pytest.approx(theirs[key], abs=1e-4), (mine["token_str"], key)
