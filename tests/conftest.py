"""Shared fixtures: offline settings for every tier, and one running app for e2e + browser."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"

# The Hub is unreachable on CI: say so up front so nothing waits on it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def pytest_collection_modifyitems(config, items):
    """Mark each test with its tier (the folder it lives in) so `-m unit` etc. select a tier."""
    for item in items:
        tier = Path(str(item.fspath)).parent.name
        if tier in ("unit", "integration", "e2e", "browser"):
            item.add_marker(getattr(pytest.mark, tier))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url():
    """Start app.py on a free port (local profile, offline) and yield its URL."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log = open(ARTIFACTS / "app.log", "w")
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", GRADIO_ANALYTICS_ENABLED="False")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "app.py"), "--host", "127.0.0.1", "--port", str(port), "--profile", "local"],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 240
    while True:
        if proc.poll() is not None:
            log.close()
            raise RuntimeError(f"app.py exited with {proc.returncode}:\n{(ARTIFACTS / 'app.log').read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url + "gradio_api/info", timeout=5) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        if time.time() > deadline:
            proc.kill()
            raise RuntimeError("app.py did not answer within 240 s; see tests/artifacts/app.log")
        time.sleep(1)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def client(app_url):
    from gradio_client import Client

    return Client(app_url, verbose=False)
