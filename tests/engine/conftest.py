"""The engine tier: a real vLLM server (scripts/engine.sh, the engine's own venv from `make engine`)
on a free loopback port, started once for the tier and stopped after it.

Skipped only when the engine venv is absent; `make test` / `make engine-test` build it and set
TLAB_REQUIRE_ENGINE, so there a missing venv fails instead.
"""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.conftest import ROOT

ENGINE_PYTHON = ROOT / ".engine-venv" / "bin" / "python"
SCRIPT = ROOT / "scripts" / "engine.sh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def engine_url():
    """The URL of a running vLLM engine serving the converted SmolLM2 (fp32, eager).
    TLAB_ENGINE_TEST_URL: use an engine already running (scripts/engine.sh start) and leave it up."""
    if os.environ.get("TLAB_ENGINE_TEST_URL"):
        yield os.environ["TLAB_ENGINE_TEST_URL"].rstrip("/")
        return
    if not ENGINE_PYTHON.exists():
        if os.environ.get("TLAB_REQUIRE_ENGINE"):
            pytest.fail(f"{ENGINE_PYTHON} is missing: `make engine` builds it")
        pytest.skip("the engine virtualenv (.engine-venv) is absent: run `make engine` to build it")
    env = dict(os.environ, ENGINE_PORT=str(_free_port()))
    started = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=600)
    if started.returncode != 0:
        pytest.fail(f"the engine did not start:\n{started.stdout}\n{started.stderr}")
    url = subprocess.run([str(SCRIPT), "url"], env=env, capture_output=True, text=True).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def engine(engine_url):
    from backend.engines.server import generation as remote

    return remote.engine(engine_url, refresh=True)


@pytest.fixture(scope="session")
def lm():
    """The decoder in this process (local profile): the reference the engine must match."""
    from backend import hub

    return hub.load("decoder")


@pytest.fixture(scope="session")
def engine_app(engine_url):
    """The app pointed at the engine, started once for the tier (the API and browser tests share it)."""
    from tests.conftest import running_app

    with running_app("app-engine.log", extra_env={"TLAB_GENERATION_URL": engine_url}) as url:
        yield url
