"""`/compress`, `/compress_predict`, `/compress_download` through gradio_client against the running
app: the default run (built at set-up) at once, a live run of the learner's settings, every
variant on one sentence, a model's zip, and bad input answered in words."""

from __future__ import annotations

import zipfile

import pytest


def test_the_default_run_shows_every_variant_at_once(client):
    r, *_ = client.predict(run="default", through="all", api_name="/compress")
    keys = [row["key"] for row in r["rows"]]
    assert keys[:5] == ["teacher", "student", "student_int8", "student_onnx", "student_onnx_int8"]
    assert any(k.startswith("pruned_") for k in keys)
    assert r["source"] == "built at set-up" and r["run_id"] == "default"
    assert all(row["latency_ms_mean"] > 0 and row["size_mb"] > 0 for row in r["rows"])
    assert r["disagreements"]["student_onnx"]["of"] == r["test_size"]
    assert r["timings"]["teacher"] > 0 and "total" in r["timings"]  # the set-up build's own timings, not this call's


def test_every_variant_on_a_sentence_and_a_download(client):
    p, rows, note = client.predict(text="My dog ran away and I cried all night.", run_id="default",
                                   api_name="/compress_predict")
    assert len(rows["data"] if isinstance(rows, dict) else rows) == len(p["variants"]) >= 5
    assert ("agree" in note) or ("Disagree" in note)
    path, md = client.predict(variant="student_onnx_int8", run_id="default", api_name="/compress_download")
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    assert "student_onnx_int8/student_int8.onnx" in names and "student_onnx_int8/labels.json" in names
    assert "MB" in md


def test_a_live_run_with_the_learners_settings(client):
    r, *_ = client.predict(run="custom", temperature=3.0, alpha=0.3, layers=1, sparsity=0.5, through="distil",
                           epochs=1, api_name="/compress")
    assert r["source"] == "run live with your settings" and len(r["run_id"]) == 16
    assert [row["key"] for row in r["rows"]] == ["teacher", "student"]
    assert r["settings"]["layers"] == [0] and r["chosen"]["temperature"] == 3.0
    p, *_ = client.predict(text="What a lovely surprise!", run_id=r["run_id"], api_name="/compress_predict")
    assert [v["key"] for v in p["variants"]] == ["teacher", "student"]


@pytest.mark.parametrize("api, kwargs, word", [
    ("/compress", {"run": "custom", "layers": 9}, "layers"),
    ("/compress", {"run": "custom", "epochs": 0}, "epochs"),
    ("/compress", {"through": "everything"}, "through"),
    ("/compress_predict", {"text": "hi", "run_id": "../../etc"}, "run_id"),
    ("/compress_predict", {"text": "", "run_id": "default"}, "empty"),
    ("/compress_download", {"variant": "nope", "run_id": "default"}, "variant"),
])
def test_bad_input_is_readable(client, api, kwargs, word):
    with pytest.raises(Exception) as info:
        client.predict(**kwargs, api_name=api)
    assert word in str(info.value)
