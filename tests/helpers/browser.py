"""Helpers of the browser tier (pages, screenshots, waits, table and JSON checks); the `browser` and `page`
fixtures are in tests/conftest.py."""

from __future__ import annotations

import os
import re

from tests.helpers.app import ARTIFACTS

# ------------------------------------------------------------------ the browser (one per run)
CHROMIUM = os.environ.get("TLAB_CHROMIUM", "/usr/bin/chromium")
EXPECT_S = 20  # how long an expect() without a timeout of its own waits for the page to agree


# Any URL but a loopback host's (and the page's own data:, blob: and about: URLs).
LEAVES_LOCALHOST = re.compile(r"^(?!(?:https?|wss?)://(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?(?:[/?#]|$)"
                              r"|data:|blob:|about:)")


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


def shot(page, name: str) -> None:
    """Save a screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def settled(page, timeout_ms: int = 240_000) -> None:
    """Wait until no run on the page is still going (no Gradio status tracker showing).

    A result's text can be on screen before its run has ended: the badge shows the run's progress
    ("queue: 1/1 | 0.2s", "Loading the encoder model") while it runs, and its data arrives before the
    message that ends the run. A button pressed again in that gap is dropped by Gradio (a click's
    trigger mode is "once": no second request while the first is open), so a test that presses the
    same button twice waits here between the presses."""
    page.wait_for_function(
        """() => ![...document.querySelectorAll('[data-testid="status-tracker"]')]
                   .some(e => !e.classList.contains('hide'))""",
        timeout=timeout_ms,
    )


def until(page, read, done=bool, timeout_ms: int = 10_000, every_ms: int = 100):
    """Read `read()` again and again until `done(value)` holds or `timeout_ms` has passed -> the last value read,
    for the caller to assert on. For a condition the page reaches by itself (a script's pass after a draw), in
    place of a fixed wait that is too short on a loaded box and too long on a quiet one."""
    waited = 0
    while True:
        value = read()
        if done(value) or waited >= timeout_ms:
            return value
        page.wait_for_timeout(every_ms)
        waited += every_ms


def press_again(page, button: str) -> None:
    """Press a button whose earlier run may still be open: once `settled`, so the press is not dropped."""
    settled(page)
    page.locator(button).click()


# `browser` and `page` live in tests/conftest.py: one Chromium for the whole run, whichever tier
# asks (a second sync_playwright in the same thread fails while the first is open).


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
