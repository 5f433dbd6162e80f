"""The Pipelines API's times are the caller's wait (issue "truth"): a result's `seconds` is the
whole request from the entry point's start, a first use's load included, and `waited` names
what it waited for. A cold app (a fresh, empty TLAB_CACHE_DIR) shows the first-use case."""

from __future__ import annotations

import time

from tests.conftest import running_app


def timed(client, api_name, *args):
    start = time.perf_counter()
    out = client.predict(*args, api_name=api_name)
    return out, out[-1], time.perf_counter() - start


def test_a_cold_first_call_reports_the_whole_wait(tmp_path):
    from gradio_client import Client

    with running_app(log_name="app-cold-cache.log", extra_env={"TLAB_CACHE_DIR": str(tmp_path)}) as url:
        client = Client(url, verbose=False)
        out, r, wall = timed(client, "/fill_mask", "Paris is the [MASK] of France.", 3, "")
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
