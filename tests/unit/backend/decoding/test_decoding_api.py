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
from backend.engines.generation import generate
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import save_tiny, smollm2_tokenizer, tiny_llama

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


def _untimed(data: dict) -> dict:  # "engine" (where it ran): tests/unit/backend/engines/server/test_remote_generation*.py
    return {k: v for k, v in data.items() if k not in TIMING and k not in ("model", "engine")}


FP32_ONLY = {"generated": "fp32", "other": None}  # an fp32 run: no second model re-scores the tokens


def _expected(tiny, tok, settings, prompt=PROMPT) -> dict:
    return {**_untimed(generate.decode(tiny, tok, prompt, settings).to_dict()), "precision": FP32_ONLY}


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
    assert _untimed(final) == _expected(tiny, tok, settings)
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
    from components.decoding import handlers as tab

    api = tab.decode_api(PROMPT, {"strategy": "greedy", "max_new_tokens": 4})
    assert api["model"]["role"] == "decoder" and api["n_new_tokens"] == 4
    knobs = ["greedy", 4, 1.0, 0, 1.0, 4, 1.0, 0, False, 1, 1.0, "", False, 5, "fp32"]
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


# ----------------------------------------------------------------------------- precision: int8


def _int8_expected(settings: dict) -> tuple[dict, dict]:
    """What an int8 run must return: the model-level run of the cached int8 copy, and the fp32
    model's own log-probs of those tokens (one teacher-forced forward)."""
    from backend import hub
    from backend.engines.compression import quantize as Q

    lm = hub.load("decoder")
    q, _ = Q.int8_of(lm)
    run = generate.decode(q, lm.tokenizer, PROMPT, settings).to_dict()
    ids = run["outputs"][0]["token_ids"][: len(run["steps"])]
    scored = generate.score_sequence(lm.model, run["prompt_token_ids"] + ids, len(run["prompt_token_ids"]), top_n=1)
    return run, scored


@pytest.mark.parametrize("settings", [
    {"strategy": "greedy", "max_new_tokens": 6, "precision": "int8"},
    {"strategy": "sample", "top_p": 0.9, "max_new_tokens": 6, "seed": 5, "precision": "int8"},
    {"strategy": "beam", "num_beams": 3, "max_new_tokens": 5, "precision": "int8"},
])
def test_int8_run_generates_with_the_quantized_copy_and_shows_both_probabilities(settings):
    from backend.engines.generation.result import prob
    from backend.engines.compression import quantize as Q

    Q.clear_cache()
    data = decoding.decode(PROMPT, settings)
    run, scored = _int8_expected(settings)
    plain = {k: v for k, v in _untimed(data).items() if k not in ("precision", "warnings")}
    plain["steps"] = [{k: v for k, v in st.items() if k not in ("prob_int8", "prob_fp32")} for st in plain["steps"]]
    assert plain == {k: v for k, v in _untimed(run).items() if k != "warnings"}
    assert data["label"].endswith(" int8") and data["model"]["dtype"].startswith("int8")
    assert len(data["steps"]) == len(scored["logprob"]) >= 1
    for step, lp in zip(data["steps"], scored["logprob"]):
        assert step["prob_int8"] == step["prob"]  # the generating model's own probability
        assert step["prob_fp32"] == prob(lp)  # the fp32 model's, teacher-forced: exact
        assert abs(step["prob_int8"] - step["prob_fp32"]) < 0.1  # a tiny model: int8 stays close
    info = data["precision"]
    assert (info["generated"], info["other"]) == ("int8", "fp32")
    assert info["other_sequence_logprob"] == round(sum(scored["logprob"]), 4)
    assert info["max_abs_prob_diff"] == round(max(abs(s["prob_int8"] - s["prob_fp32"]) for s in data["steps"]), 6)
    assert any("int8 copy of the model was built for this run" in w for w in data["warnings"])
    json.dumps(data)


def test_int8_copy_is_cached_and_bounded_to_one(tiny, tok, tmp_path, monkeypatch):
    from backend.engines.compression import quantize as Q

    Q.clear_cache()
    settings = {"max_new_tokens": 3, "precision": "int8"}
    first = decoding.decode(PROMPT, settings)
    again = decoding.decode(PROMPT, settings)
    assert Q.cached_count() == 1 and again["precision"]["int8_built_s"] == 0.0
    assert not any("built for this run" in w for w in again["warnings"])
    assert first["text"] == again["text"]
    # the role now serves another model: its int8 copy replaces the old one, never adds to it
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(save_tiny(tiny, tok, tmp_path / "other")))
    decoding.decode(PROMPT, settings)
    assert Q.cached_count() == 1


def test_fp32_run_has_one_probability_column():
    data = decoding.decode(PROMPT, {"max_new_tokens": 3})
    assert data["precision"] == FP32_ONLY and data["model"]["dtype"] == "float32"
    assert all("prob_int8" not in s and "prob_fp32" not in s for s in data["steps"])


def test_int8_stream_and_compare_use_the_int8_copy():
    settings = {"strategy": "greedy", "max_new_tokens": 4, "precision": "int8"}
    expected = decoding.decode(PROMPT, settings)
    final = list(decoding.decode_stream(PROMPT, settings))[-1][1]
    assert _untimed(final)["steps"] == _untimed(expected)["steps"] and "prob_fp32" in final["steps"][0]
    out = decoding.compare(PROMPT, [{"max_new_tokens": 4}, settings])
    assert [r["strategy"] for r in out["rows"]] == ["greedy", "greedy int8"]
    assert out["rows"][1]["text"] == expected["text"]


def test_step_distribution_cut_matches_the_step_table():
    # the cumulative plot's surviving count is the table's "tokens left" at step 0, top_p on and off
    for cut in ({"top_p": 0.9, "top_k": 0}, {"top_p": 1.0, "top_k": 0}, {"top_p": 0.8, "top_k": 40},
                {"top_p": 1.0, "top_k": 25}):
        for precision in ("fp32", "int8"):
            settings = {"strategy": "sample", "temperature": 0.7, "max_new_tokens": 1, "seed": 0,
                        "precision": precision, **cut}
            run = decoding.decode(PROMPT, settings)
            dist = decoding.step_distribution(run["prompt_token_ids"], top_p=cut["top_p"], temperature=0.7,
                                              top_k=cut["top_k"], precision=precision)
            # int8: a separate forward can land one token either side of the top-p boundary (the tab's
            # title therefore quotes the run's own count; see test_tab_top_p_chart_says_the_setting)
            slack = 0 if precision == "fp32" else 1
            assert abs(dist["cumulative"]["cut_rank"] - run["steps"][0]["survivors"]) <= slack, (cut, precision)
    assert dist["cumulative"]["cut_rank"] == 25 and dist["cumulative"]["top_k"] == 25


def test_tab_top_p_chart_says_the_setting():
    from components.decoding import handlers as tab

    def run(strategy, top_p, precision="fp32", top_k=0):
        knobs = [strategy, 3, 0.7, top_k, top_p, 2, 1.0, 0, False, 1, 1.0, "1", False, 5, precision]
        return list(tab.run(PROMPT, *knobs, "1"))[-1]

    final = run("sample", 0.9, "int8")
    left = final[3]["value"]["left"].tolist()
    assert final[6].layout.title.text == f"top_p = 0.9 at T = 0.7: {left[0]:,} token(s) survive"
    assert final[3]["headers"] == ["#", "token", "p int8", "p fp32", "p (T)", "p (cut)", "left", "rank", "entropy",
                                   "top candidates (p)"]
    state = final[9]
    _, cum = tab.show_step(state, 2, "1")
    assert cum.layout.title.text == f"top_p = 0.9 at T = 0.7: {left[2]:,} token(s) survive"
    final = run("sample", 1.0, top_k=30)
    assert final[6].layout.title.text == "top_p = off at T = 0.7, top_k = 30: 30 tokens left"
    assert final[3]["value"]["left"].tolist() == [30, 30, 30]
    for strategy in ("greedy", "beam"):
        title = run(strategy, 0.9)[6].layout.title.text
        assert title == f"top_p = off ({strategy} search does not sample; the model's own curve, T = 1)"
