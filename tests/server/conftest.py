"""The server tier: a real vLLM server (scripts/server.sh, the server's own venv from `make server`)
on a free loopback port, started once for the tier and stopped after it.

Skipped only when the server venv is absent; `make test` / `make server-test` build it and set
TLAB_REQUIRE_SERVER, so there a missing venv fails instead.
"""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.helpers.app import ROOT
SERVER_PYTHON = ROOT / ".server-venv" / "bin" / "python"
SCRIPT = ROOT / "scripts" / "server.sh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server_url():
    """The URL of a running vLLM server serving the converted SmolLM2 (fp32, eager).
    TLAB_SERVER_TEST_URL: use a server already running (scripts/server.sh start) and leave it up."""
    if os.environ.get("TLAB_SERVER_TEST_URL"):
        yield os.environ["TLAB_SERVER_TEST_URL"].rstrip("/")
        return
    if not SERVER_PYTHON.exists():
        if os.environ.get("TLAB_REQUIRE_SERVER"):
            pytest.fail(f"{SERVER_PYTHON} is missing: `make server` builds it")
        pytest.skip("the server virtualenv (.server-venv) is absent: run `make server` to build it")
    env = dict(os.environ, SERVER_PORT=str(_free_port()))
    started = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=600)
    if started.returncode != 0:
        pytest.fail(f"the server did not start:\n{started.stdout}\n{started.stderr}")
    url = subprocess.run([str(SCRIPT), "url"], env=env, capture_output=True, text=True).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def server(server_url):
    from backend.engines.server import generation as remote

    return remote.server(server_url, refresh=True)


@pytest.fixture(scope="session")
def lm():
    """The decoder in this process (local profile): the reference the server must match."""
    from backend import hub

    return hub.load("decoder")


@pytest.fixture(scope="session")
def server_app(server_url):
    """The app pointed at the server, started once for the tier (the API and browser tests share it)."""
    from tests.helpers.app import running_app
    with running_app("app-server.log", extra_env={"TLAB_GENERATION_URL": server_url}) as url:
        yield url
