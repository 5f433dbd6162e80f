"""Shared fixtures: offline settings for every tier, and one running app for e2e + browser."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
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


def _tier(item) -> str:
    """The tier a test belongs to: the first folder under tests/ (tests/unit/backend/runtime/... is unit)."""
    path = Path(str(item.fspath)).resolve()
    tests = ROOT / "tests"
    return path.relative_to(tests).parts[0] if path.is_relative_to(tests) else path.parent.name


def pytest_collection_modifyitems(config, items):
    """Mark each test with its tier (the folder it lives in) so `-m unit` etc. select a tier; a test marked
    `fresh_app` runs first among its tier's tests (it measures an app no test has used: the memory soak), the
    tier's tests keeping their place in the session."""
    for item in items:
        tier = _tier(item)
        if tier in ("unit", "integration", "e2e", "browser", "fuzz", "space", "server"):
            item.add_marker(getattr(pytest.mark, tier))
    places: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        places.setdefault(_tier(item), []).append(n)
    for spots in places.values():
        mine = [items[n] for n in spots]
        ordered = sorted(mine, key=lambda i: i.get_closest_marker("fresh_app") is None)  # stable: marked first
        for n, item in zip(spots, ordered):
            items[n] = item


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


@pytest.fixture(scope="session")
def lane_app():
    """The app on the local profile, shared by the e2e and browser tiers (one per lane when
    scripts/test_lanes.py runs the tiers side by side: each lane logs to its own file). Where the lane says
    so (TLAB_TEST_APP_ON_ZEROGPU: the browser lane) it runs as on ZeroGPU (zerogpu_env): the whole-page flows
    then run under the fake `spaces` too, and tests/e2e/test_zerogpu.py checks its log after them.
    -> a namespace: url, spaces_log (None off ZeroGPU)."""
    from types import SimpleNamespace

    lane = os.environ.get("TLAB_TEST_LANE")
    spaces_log, env = None, {}
    if os.environ.get("TLAB_TEST_APP_ON_ZEROGPU"):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        spaces_log = ARTIFACTS / f"spaces-lane-{lane or 'app'}.jsonl"
        spaces_log.unlink(missing_ok=True)
        env = zerogpu_env(spaces_log)
    with running_app(f"app-lane-{lane}.log" if lane else "app.log", extra_env=env) as url:
        yield SimpleNamespace(url=url, spaces_log=spaces_log)


@pytest.fixture(scope="session")
def app_url(lane_app):
    return lane_app.url


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


@pytest.fixture(scope="session")
def private_cache_app(tmp_path_factory):
    """One app of its own (app_of_its_own) for the api lane's tests that need their own cache and upload
    folder: the cold first call (tests/e2e/test_pipelines_timing_api.py, its first user in lane order: e2e
    runs before fuzz) and the private corpus (tests/fuzz/test_public_mode.py). The cold test checks its
    cache is still empty; where it is not (the files ran out of lane order) it starts a cold app of its own."""
    with app_of_its_own(tmp_path_factory, "app-private.log") as app:
        yield app


@pytest.fixture(scope="module")
def tab_url(request):
    """A browser module's own page: app.py's page holding only the tab its module names in `TAB` (a key
    of app.TABS; or a tuple of keys: the tabs a hand-off test crosses), served in this test process as main() serves it (tests/helpers/tab_app.py), closed after the
    module. No app process of its own: its models load here once, shared by every module's page."""
    from tests.helpers.tab_app import served_page

    tabs = request.module.TAB  # one key, or the keys of the tabs a hand-off across tabs needs
    with served_page([tabs] if isinstance(tabs, str) else list(tabs)) as url:
        yield url


@pytest.fixture(scope="module")
def client(app_url):
    from gradio_client import Client

    return Client(app_url, verbose=False)


# ------------------------------------------------------------------ the browser (one per run)
CHROMIUM = os.environ.get("TLAB_CHROMIUM", "/usr/bin/chromium")
EXPECT_S = 20  # how long an expect() without a timeout of its own waits for the page to agree
# Any URL but a loopback host's (and the page's own data:, blob: and about: URLs).
LEAVES_LOCALHOST = re.compile(r"^(?!(?:https?|wss?)://(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?(?:[/?#]|$)"
                              r"|data:|blob:|about:)")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    # An expectation's patience, where a test names none: Playwright's 5 s covers a figure drawn on a quiet
    # box, not one drawn beside the other lane on a loaded CI box (a confusion matrix missed it there). Only
    # the wait grows; what is expected does not change.
    expect.set_options(timeout=EXPECT_S * 1000)

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (make test does it)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                  "--no-first-run", "--disable-component-update", "--disable-sync"],
        )
        yield b
        b.close()


def new_page(browser, *, settle: bool = True, **context_options):
    """A page in a context of its own (1400 x 1000 unless `context_options` say otherwise; close it
    with page.context.close()). Requests leaving localhost are aborted and listed in
    page.blocked_requests. With `settle`, page.goto on the app waits until the page has applied its
    own address (window.__tlabReady): a tab clicked before the restore has answered can be put back
    by it."""
    context = browser.new_context(**{"viewport": {"width": 1400, "height": 1000}, **context_options})
    blocked: list[str] = []

    def refuse(route):
        blocked.append(route.request.url)
        route.abort()

    # Matched by Playwright itself: only a request leaving localhost reaches this process (a catch-all
    # route sent each of the page's ~110 requests per load through it and back, to continue most).
    context.route(LEAVES_LOCALHOST, refuse)
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    pg.blocked_requests = blocked
    # An uncaught error in the page's JS (a figure Plotly cannot draw) stops Gradio applying the rest of that
    # run's outputs and leaves its status spinning: the page fixture fails a test that saw one.
    pg.page_errors = []
    pg.on("pageerror", lambda error: pg.page_errors.append(str(error)[:300]))
    if settle:
        goto = pg.goto

        def goto_and_settle(url, **kwargs):
            response = goto(url, **kwargs)
            if pg.evaluate("() => !!document.querySelector('gradio-app')"):
                pg.wait_for_function("() => window.__tlabReady === true", timeout=120_000)
            return response

        pg.goto = goto_and_settle
    return pg


@pytest.fixture()
def page(browser):
    """A fresh page at 1400 x 1000 (new_page: guarded, settled)."""
    pg = new_page(browser)
    yield pg
    errors = list(pg.page_errors)
    pg.context.close()
    assert errors == [], f"uncaught errors in the page's JS: {errors}"
