"""The Decoding tab's role-level entry points, through the real hub path.

A tiny random llama is saved with the real SmolLM2 tokenizer into a folder and served as the
`decoder` role via TLAB_MODEL_DECODER; each result must equal the model-level function's on
the same weights, and bad input must be refused before any model loads.
"""

from __future__ import annotations

import json
import threading

import pytest

from backend import decoding
from backend.decoding import generate
from backend.errors import InputError
from tests.tiny_models import save_tiny, smollm2_tokenizer, tiny_llama

PROMPT = "Transformers are the"
PEAKED = {"initializer_range": 0.5, "max_position_embeddings": 256}
TIMING = ("generate_seconds", "seconds", "tokens_per_s")


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def tiny(tok):
    return tiny_llama(seed=0, pad_token_id=tok.eos_token_id, **PEAKED)


@pytest.fixture(scope="module")
def folder(tiny, tok, tmp_path_factory):
    return save_tiny(tiny, tok, tmp_path_factory.mktemp("decoding-api") / "tiny-llama")


@pytest.fixture(autouse=True)
def served(folder, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folder))


def _untimed(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in TIMING and k != "model"}


def _expected(tiny, tok, settings, prompt=PROMPT) -> dict:
    return _untimed(generate.decode(tiny, tok, prompt, settings).to_dict())


# ----------------------------------------------------------------------------- decode


@pytest.mark.parametrize("settings", [
    {"strategy": "greedy", "max_new_tokens": 6},
    {"strategy": "sample", "top_p": 0.9, "temperature": 0.8, "max_new_tokens": 6, "seed": 3},
    {"strategy": "beam", "num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 5},
])
def test_decode_equals_the_model_level_run(tiny, tok, folder, settings):
    data = decoding.decode(PROMPT, settings)
    assert _untimed(data) == _expected(tiny, tok, settings)
    assert data["model"]["role"] == "decoder"
    assert data["model"]["checkpoint"] == str(folder) and data["model"]["source"] == "local-dir"
    json.dumps(data)


def test_decode_takes_json_text_and_defaults(tiny, tok):
    data = decoding.decode(PROMPT, '{"max_new_tokens": 4}')
    assert _untimed(data) == _expected(tiny, tok, {"max_new_tokens": 4})
    assert data["settings"]["strategy"] == "greedy"
    assert _untimed(decoding.decode(PROMPT)) == _expected(tiny, tok, None)


def test_another_role_serves_its_own_model(tiny, tok, folder, monkeypatch):
    monkeypatch.setenv("TLAB_MODEL_TEXT_GENERATION", str(folder))
    data = decoding.decode(PROMPT, {"max_new_tokens": 3}, role="text_generation")
    assert data["model"]["role"] == "text_generation"
    assert _untimed(data) == _expected(tiny, tok, {"max_new_tokens": 3})


def test_first_load_reports_progress(tiny, tok, tmp_path, monkeypatch):
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(save_tiny(tiny, tok, tmp_path / "fresh")))
    calls = []
    decoding.decode(PROMPT, {"max_new_tokens": 2}, progress=lambda f, desc: calls.append((f, desc)))
    assert calls == [(0.05, "Loading the decoder model (first use only)")]


BAD = [
    ("", {}, "The prompt is empty"),
    (None, {}, "The prompt is empty"),
    (PROMPT, "{not json", "settings is not valid JSON"),
    (PROMPT, ["greedy"], "must be a JSON object"),
    (PROMPT, {"strategy": "sample", "temperature": 0}, "choose the 'greedy' strategy"),
    (PROMPT, {"strategy": "beam", "length_penalty": 1e9}, "length_penalty must be between -10 and 10"),
    (PROMPT, {"strategy": "beam", "length_penalty": float("nan")}, "length_penalty must be a finite number"),
    (PROMPT, {"temprature": 0.5}, "Unknown setting"),
]


@pytest.mark.parametrize("prompt,settings,message", BAD, ids=[b[2] for b in BAD])
def test_bad_input_is_refused_before_any_model_loads(monkeypatch, prompt, settings, message):
    # a model that cannot load: reaching the hub would raise ModelLoadError instead
    monkeypatch.setenv("TLAB_MODEL_DECODER", "/nonexistent/decoder")
    for call in (lambda: decoding.decode(prompt, settings), lambda: next(decoding.decode_stream(prompt, settings))):
        with pytest.raises(InputError) as err:
            call()
        assert message in str(err.value)


def test_a_model_that_cannot_load_says_so(monkeypatch):
    monkeypatch.setenv("TLAB_MODEL_DECODER", "/nonexistent/decoder")
    with pytest.raises(Exception, match="does not exist"):
        decoding.decode(PROMPT, {"max_new_tokens": 2})


# ----------------------------------------------------------------------------- stream


def test_stream_yields_growing_text_then_the_payload(tiny, tok):
    settings = {"strategy": "greedy", "max_new_tokens": 5}
    items = list(decoding.decode_stream(PROMPT, settings))
    partial = [text for text, data in items if data is None]
    expected = generate.decode(tiny, tok, PROMPT, settings)
    assert partial == [tok.decode(expected.outputs[0]["token_ids"][: i + 1], skip_special_tokens=True)
                       for i in range(5)]
    final_text, final = items[-1]
    assert final_text == final["text"] == expected.text
    assert _untimed(final) == _untimed(expected.to_dict())
    assert final["model"]["role"] == "decoder"


def test_beam_stream_yields_only_the_result(tiny, tok):
    settings = {"strategy": "beam", "num_beams": 2, "max_new_tokens": 4}
    items = list(decoding.decode_stream(PROMPT, settings))
    assert len(items) == 1 and _untimed(items[0][1]) == _expected(tiny, tok, settings)


def test_closing_the_stream_stops_generation():
    stream = decoding.decode_stream(PROMPT, {"strategy": "greedy", "max_new_tokens": 200})
    text, data = next(stream)
    assert data is None and text
    stream.close()  # what the tab's Stop does, through contextlib.closing
    assert not any(t.name == "decode" and t.is_alive() for t in threading.enumerate())
    assert decoding.decode(PROMPT, {"max_new_tokens": 3})["n_new_tokens"] == 3


# ----------------------------------------------------------------------------- compare


def test_compare_runs_each_strategy_and_reports_progress(tiny, tok):
    strategies = [
        {"strategy": "greedy", "max_new_tokens": 4},
        {"strategy": "beam", "num_beams": 3, "max_new_tokens": 4},
        {"strategy": "sample", "top_p": 0.9, "max_new_tokens": 4, "seed": 1},
    ]
    decoding.decode(PROMPT, {"max_new_tokens": 1})  # loaded already: progress hears only the runs
    calls = []
    out = decoding.compare(PROMPT, json.dumps(strategies), progress=lambda f, desc: calls.append((f, desc)))
    assert calls == [(0.0, "running greedy"), (1 / 3, "running beam 3"), (2 / 3, "running sample top-p 0.9")]
    assert out["prompt"] == PROMPT and out["model"]["role"] == "decoder"
    expected = generate.compare(tiny, tok, PROMPT, strategies)
    assert [{k: v for k, v in r.items() if k not in ("tokens_per_s", "seconds")} for r in out["rows"]] == \
           [{k: v for k, v in r.items() if k not in ("tokens_per_s", "seconds")} for r in expected]
    json.dumps(out)


@pytest.mark.parametrize("prompt,strategies,message", [
    (PROMPT, [{"strategy": "greedy"}], "2 to 4 strategies"),
    (PROMPT, "[oops", "not valid JSON"),
    (PROMPT, [{"strategy": "greedy"}, {"strategy": "beam", "num_beams": 99}], "Strategy 2: num_beams"),
    ("  ", [{"strategy": "greedy"}, {"strategy": "beam"}], "The prompt is empty"),
])
def test_compare_bad_input_before_any_model_loads(monkeypatch, prompt, strategies, message):
    monkeypatch.setenv("TLAB_MODEL_DECODER", "/nonexistent/decoder")
    with pytest.raises(InputError) as err:
        decoding.compare(prompt, strategies)
    assert message in str(err.value)


# ----------------------------------------------------------------------------- step distribution


def test_step_distribution_equals_the_model_level_one(tiny, tok):
    ids = tok(PROMPT)["input_ids"]
    dist = decoding.step_distribution(ids, temperatures=[0.5, 2.0], top_p=0.8, temperature=0.7, step=3)
    expected = generate.step_distribution(tiny, tok, ids, temperatures=[0.5, 2.0], top_p=0.8,
                                          cumulative_temperature=0.7)
    assert {k: v for k, v in dist.items() if k not in ("step", "model")} == expected
    assert dist["step"] == 3 and dist["model"]["role"] == "decoder"
    json.dumps(dist)


@pytest.mark.parametrize("ids,kwargs,message", [
    ([], {}, "no context to predict from"),
    ([1, "x"], {}, "token_ids must be a whole number"),
    ([1, 2], {"top_p": float("inf")}, "top_p must be a finite number"),
    ([1, 2], {"top_p": 0}, "top_p must be in (0, 1]"),
    ([1, 2], {"temperatures": [1.0, 0]}, "temperature must be > 0"),
])
def test_step_distribution_bad_input(ids, kwargs, message):
    with pytest.raises(InputError) as err:
        decoding.step_distribution(ids, **kwargs)
    assert message in str(err.value)


# ----------------------------------------------------------------------------- the tab, on top


def test_tab_handlers_format_the_backend_results(tok):
    from components import decoding as tab

    api = tab.decode_api(PROMPT, {"strategy": "greedy", "max_new_tokens": 4})
    assert api["model"]["role"] == "decoder" and api["n_new_tokens"] == 4
    knobs = ["greedy", 4, 1.0, 0, 1.0, 4, 1.0, 0, False, 1, 1.0, "", False, 5]
    updates = list(tab.run(PROMPT, *knobs, "0.5, 2"))
    final = updates[-1]
    assert final[0] == api["text"] and "Served by" in final[2]
    assert [t.name.split(" (")[0] for t in final[5].data] == ["T = 0.5", "T = 2"]
    state = final[9]
    assert state["ids"] == api["prompt_token_ids"] + api["outputs"][0]["token_ids"]
    temp_fig, cum_fig = tab.show_step(state, 2, "1")
    assert temp_fig.layout.title.text.startswith("Next-token distribution before generated token #2")
    out = tab._compare_api(PROMPT, [{"max_new_tokens": 2}, {"strategy": "beam", "max_new_tokens": 2}])
    assert [r["strategy"] for r in out["rows"]] == ["greedy", "beam 4"] and out["model"]["role"] == "decoder"
