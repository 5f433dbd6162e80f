"""Shared fixtures: offline settings for every tier, and one running app for e2e + browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.app import ARTIFACTS, ROOT, app_of_its_own, running_app, zerogpu_env
from tests.helpers.browser import CHROMIUM, EXPECT_S, new_page

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


@pytest.fixture()
def page(browser):
    """A fresh page at 1400 x 1000 (new_page: guarded, settled)."""
    pg = new_page(browser)
    yield pg
    errors = list(pg.page_errors)
    pg.context.close()
    assert errors == [], f"uncaught errors in the page's JS: {errors}"
