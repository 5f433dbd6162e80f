"""Headless Chromium (Debian's) driven by Playwright; every request off localhost is blocked."""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pytest

from tests.conftest import ARTIFACTS

CHROMIUM = os.environ.get("TLAB_CHROMIUM", "/usr/bin/chromium")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}


def shot(page, name: str) -> None:
    """Save a screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

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
    """A fresh page; requests leaving localhost are aborted and listed in page.blocked_requests."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked: list[str] = []

    def guard(route):
        url = route.request.url
        host = urlparse(url).hostname or ""
        if url.startswith(("data:", "blob:", "about:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", guard)
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    pg.blocked_requests = blocked
    yield pg
    context.close()


# ---------------------------------------------------------------- what the ux checks share
def overflowing_tables(page, scope: str = "body") -> list[str]:
    """Result tables under `scope` wider than their box at this viewport (label: scroll vs client
    width). A table that needs horizontal scrolling hides its key columns: it should wrap."""
    return page.evaluate(
        """(scope) => {
            const root = document.querySelector(scope) || document.body;
            const out = [];
            for (const t of root.querySelectorAll('.virtual-table-viewport, .table-wrap, .prose table')) {
                if (t.offsetParent === null) continue;  // hidden
                if (t.scrollWidth > t.clientWidth + 2) {
                    const label = t.closest('[id]') ? t.closest('[id]').id : t.className;
                    out.push(`${label}: ${t.scrollWidth} > ${t.clientWidth}`);
                }
            }
            return out;
        }""",
        scope,
    )


def open_raw_json(page, scope: str = "body") -> int:
    """JSON viewers under `scope` that are open (visible) on arrival: the ux rule is none."""
    return page.evaluate(
        """(scope) => {
            const root = document.querySelector(scope) || document.body;
            return [...root.querySelectorAll('[data-testid="json"]')]
                .filter(e => e.offsetParent !== null && e.getBoundingClientRect().height > 0).length;
        }""",
        scope,
    )
