"""ZeroGPU: every api_name that runs a model does so inside `spaces.GPU`.

The app runs with a fake `spaces` package (tests/fake_spaces) that raises whenever a
torch module runs outside a `spaces.GPU` call, as ZeroGPU would find no CUDA there, and logs
what it wrapped; arguments and results cross pickle, as they cross processes there. In `make test`
it is the browser lane's app (tests/conftest.py lane_app), so the log also holds every whole-page
flow the browser tier ran on it before. One call
of every public api_name must then succeed (or fail only with the
app's own readable message), and the log must show no forward outside a wrapped call. An
endpoint added later without a case here fails `test_every_endpoint_has_a_case`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gradio_client import Client

from tests.helpers.api_cases import CASES, EXPECTED_ERRORS, all_api_names
from tests.helpers.app import ARTIFACTS, running_app, zerogpu_env
@pytest.fixture(scope="module")
def zerogpu(lane_app, tmp_path_factory):
    """The lane's app where it runs as on ZeroGPU (the browser lane's: its log then holds every whole-page
    flow before these calls too), else an app of this module's own."""
    if lane_app.spaces_log is not None:
        yield Client(lane_app.url, verbose=False), lane_app.spaces_log
        return
    log = tmp_path_factory.mktemp("spaces") / "spaces.jsonl"
    with running_app("app-zerogpu.log", zerogpu_env(log)) as url:
        yield Client(url, verbose=False), log


def _events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_every_endpoint_has_a_case(zerogpu):
    client, _ = zerogpu
    named = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert named == all_api_names()


def test_every_endpoint_runs_its_models_inside_spaces_gpu(zerogpu):
    client, log = zerogpu
    failures = {}
    for api_name, args in CASES.items():
        try:
            client.predict(*args, api_name=api_name)
        except Exception as exc:  # collect them all: one report names every unwrapped handler
            failures[api_name] = str(exc)[:300]
    for api_name, (args, message) in EXPECTED_ERRORS.items():
        with pytest.raises(Exception, match=message):
            client.predict(*args, api_name=api_name)
    outside = [e for e in _events(log) if e["event"] in ("outside", "unpicklable")]
    (ARTIFACTS / "spaces-events.jsonl").write_text(log.read_text() if log.exists() else "")
    assert failures == {}
    assert outside == []


def test_model_work_is_what_gets_wrapped(zerogpu):
    _, log = zerogpu
    events = _events(log)
    wrapped = {e["fn"] for e in events if e["event"] == "wrap"}
    called = {e["fn"] for e in events if e["event"] == "call"}
    assert wrapped, "nothing was wrapped: gpu_task never saw the fake spaces package"
    assert called <= wrapped
    assert all(e["duration"] > 0 for e in events if e["event"] == "wrap")
    assert not any(fn.startswith("backend.tokenizers.api") for fn in called), "the tokenizer explorer needs no GPU"
