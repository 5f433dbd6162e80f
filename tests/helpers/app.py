"""Apps the tests start and talk to: app.py on a free port (offline), its live settings, its process and
memory, and the ZeroGPU environment. The fixtures that use these are in tests/conftest.py."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app(log_name: str = "app.log", extra_env: dict | None = None, profile: str | None = "local",
                python: str = sys.executable):
    """Start app.py on a free port (offline) with `extra_env`, yield its URL, stop it after.

    `profile=None` passes no flags at all, as a Space starts it: host and port then come from
    GRADIO_SERVER_NAME / GRADIO_SERVER_PORT.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    log_path = ARTIFACTS / log_name
    log = open(log_path, "w")
    token = secrets.token_hex(16)  # this app's live settings (components/shell/live_settings.py): live_settings()
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", GRADIO_ANALYTICS_ENABLED="False",
               TLAB_SETTINGS_TOKEN=token)
    for key, value in (extra_env or {}).items():  # None removes a variable
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    if profile is None:
        env["GRADIO_SERVER_PORT"] = str(port)
        flags = []
    else:
        flags = ["--host", "127.0.0.1", "--port", str(port), "--profile", profile]
    proc = subprocess.Popen(
        [python, str(ROOT / "app.py"), *flags],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/"
    _TOKENS[url] = token
    try:
        deadline = time.time() + 240
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"app.py exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(url + "gradio_api/info", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"app.py did not answer within 240 s; see {log_path}")
            time.sleep(1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


_TOKENS: dict[str, str] = {}  # each running_app's settings token, by URL


def set_live(url: str, changes: dict) -> dict:
    """POST `changes` to the app's live settings (None: back to its value at start) -> every live key's value now."""
    req = urllib.request.Request(url + "tlab/settings", data=json.dumps(changes).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {_TOKENS[url]}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


@contextlib.contextmanager
def live_settings(url: str, **changes):
    """A running_app's limits changed for a block of tests (a time budget, quotas), as an operator can change
    them (components/shell/live_settings.py), then put back as the app started: one app serves tests that each
    need their own limits, instead of one app started per limit."""
    now = set_live(url, changes)
    assert all(now[key] == str(value) for key, value in changes.items()), now
    try:
        yield url
    finally:
        set_live(url, {key: None for key in changes})


def app_process(url: str):
    """The app.py process (a psutil.Process) that running_app started for `url`: the one child of
    this test process whose command line names its port. For CPU time and memory readings."""
    import psutil

    port = str(int(url.rstrip("/").rsplit(":", 1)[1]))
    procs = [p for p in psutil.Process().children(recursive=True)
             if port in p.cmdline() and any(a.endswith("app.py") for a in p.cmdline())]
    assert len(procs) == 1, f"app.py processes on port {port}: {procs}"
    return procs[0]


def rss_mb(proc) -> float:
    """Resident memory of an app process (from app_process), in MB."""
    return proc.memory_info().rss / 2**20


def zerogpu_env(log: Path) -> dict:
    """An app's environment as on a ZeroGPU Space, with the fake `spaces` package (tests/fake_spaces): every
    forward outside a `spaces.GPU` call raises, and each such call (or refusal) is logged to `log`."""
    return {"SPACES_ZERO_GPU": "1", "FAKE_SPACES_LOG": str(log), "PYTHONPATH": str(ROOT / "tests" / "fake_spaces")}


@contextlib.contextmanager
def app_of_its_own(tmp_path_factory, log_name: str):
    """An app on the local profile, private (TLAB_PUBLIC unset, as the lane's app), on an empty cache
    (TLAB_CACHE_DIR) and an upload folder (GRADIO_TEMP_DIR) of its own. The cache holds one thing at the
    start: a crashed write's stale `.tmp-` file (an hour old) under search/, which the start-up must delete.
    -> a namespace: url, cache, uploads, stale and log (its log file)."""
    from types import SimpleNamespace

    cache = tmp_path_factory.mktemp("cache")
    uploads = tmp_path_factory.mktemp("uploads")
    stale = cache / "search" / "old" / ".tmp-crashed"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half a write")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    env = {"TLAB_CACHE_DIR": str(cache), "GRADIO_TEMP_DIR": str(uploads)}
    with running_app(log_name, extra_env=env) as url:
        yield SimpleNamespace(url=url, cache=cache, uploads=uploads, stale=stale, log=ARTIFACTS / log_name)
