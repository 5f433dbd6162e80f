"""A Space-like start: requirements.txt alone, `python app.py` with a Space's environment.

`make space-venv` builds .space-venv from requirements.txt exactly as a Space installs it (torch
constrained to the CPU wheel on disk), and puts the two packaged models in a separate folder
that is added to PYTHONPATH only for the second half. The app is started with no flags, as a
Space starts it (SPACE_ID, SYSTEM=spaces, GRADIO_SERVER_NAME=0.0.0.0), on the `auto` profile,
with an empty Hugging Face cache and the Hub offline:

1. with no model installed, the page serves, the status panel explains every role, and every
   endpoint fails only with a readable message that says what to install;
2. with the packaged models on the path, every endpoint works under `auto`.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request

import pytest
from gradio_client import Client

from tests.helpers.api_cases import CASES, EXPECTED_ERRORS, MODEL_FREE, NEEDS_NO_MODEL, USES_NO_MODEL, all_api_names
from tests.helpers.app import ROOT, running_app
SPACE_VENV = ROOT / ".space-venv"
SPACE_PYTHON = SPACE_VENV / "bin" / "python"
PACKAGED = SPACE_VENV / "packaged-models"
UNREADABLE = re.compile(r"Traceback|\b[A-Z][a-zA-Z]+(Error|Exception)\b|preprocess|File \"")

# `make test` builds the venv and sets TLAB_REQUIRE_SPACE_VENV, so there a missing venv fails.
pytestmark = pytest.mark.skipif(
    not SPACE_PYTHON.exists() and not os.environ.get("TLAB_REQUIRE_SPACE_VENV"),
    reason="run `make space-venv` first (make test does)",
)


def space_env(tmp_path, with_models: bool) -> dict:
    env = {
        "SPACE_ID": "transformers-lab/space-check",
        "SYSTEM": "spaces",
        "GRADIO_SERVER_NAME": "0.0.0.0",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),  # nothing of the book's models in the HF cache
        "TLAB_PROFILE": None,  # a Space sets none: the app's default (auto) decides
        "PYTHONPATH": str(PACKAGED) if with_models else "",
    }
    return env


def _page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.status == 200
        return resp.read().decode("utf-8", "replace")


def test_no_models_every_tab_says_what_to_install(tmp_path):
    env = space_env(tmp_path, with_models=False)
    env["TLAB_CACHE_DIR"] = str(tmp_path / "cache")
    with running_app("app-space-bare.log", env, profile=None, python=str(SPACE_PYTHON)) as url:
        assert "Transformers Lab" in _page(url)
        client = Client(url, verbose=False)
        assert set(client.view_api(print_info=False, return_format="dict")["named_endpoints"]) == all_api_names()
        header, table = client.predict(api_name="/status")
        assert "`auto`" in header
        rows = {row[0]: row for row in table["data"]}
        for role, row in rows.items():
            assert "pip install" in row[-1] or "masked language model" in row[-1], (role, row)
        messages = {}
        for api_name, args in {**CASES, **{k: v[0] for k, v in EXPECTED_ERRORS.items()}}.items():
            if api_name == "/status":
                continue
            if api_name in NEEDS_NO_MODEL:  # it answers; each row that needed a model says what to install
                result = client.predict(*args, api_name=api_name)[-1]
                assert "pip install" in json.dumps(result), (api_name, result)
                continue
            if api_name in USES_NO_MODEL:  # trained from scratch here: nothing to install
                client.predict(*args, api_name=api_name)
                continue
            with pytest.raises(Exception) as err:
                client.predict(*args, api_name=api_name)
            messages[api_name] = str(err.value)
        for api_name, message in messages.items():
            assert not UNREADABLE.search(message), (api_name, message)
            # Either what to install, or (an index-using call after the build failed) what to do first.
            assert any(hint in message for hint in ("pip install", "masked language model", "build one first")), (
                api_name, message)


def test_with_packaged_models_every_tab_works_under_auto(tmp_path):
    env = space_env(tmp_path, with_models=True)
    with running_app("app-space.log", env, profile=None, python=str(SPACE_PYTHON)) as url:
        client = Client(url, verbose=False)
        header, table = client.predict(api_name="/status")
        rows = {row[0]: row for row in table["data"]}
        assert rows["encoder"][2] == "package" and rows["decoder"][2] == "package"
        assert rows["decoder"][4] == "yes", "a Space preloads the decoder, so no visitor pays its conversion"
        assert rows["sentiment"][3] == "fine-tuned" and rows["sentiment"][4] == "yes", (
            "a Space fine-tunes the offline sentiment classifier at start, so no visitor waits for it")
        assert rows["ner"][3] == "fine-tuned" and rows["ner"][4] == "yes", (
            "a Space fine-tunes the offline NER model at start, so no visitor waits for it")
        failures = {}
        for api_name, args in CASES.items():
            try:
                client.predict(*args, api_name=api_name)
            except Exception as exc:
                failures[api_name] = str(exc)[:300]
        assert failures == {}
        for api_name, (args, message) in EXPECTED_ERRORS.items():
            with pytest.raises(Exception, match=message):
                client.predict(*args, api_name=api_name)
        assert MODEL_FREE <= set(CASES)
