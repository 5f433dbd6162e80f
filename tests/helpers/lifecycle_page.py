"""A result's life cycle seen in the browser: an error leaves no stale output behind."""

from __future__ import annotations


from playwright.sync_api import expect

from tests.helpers.browser import settled, until


def an_error_leaves_nothing(page, run: str, box: str, outputs: list[str], plots: list[str], spoil) -> None:
    """After a good run on screen: spoil the input, run again; one inline message, and nothing of the good
    run left (its outputs blank, its figures and their "What to notice" lines gone)."""
    settled(page)  # the good run has ended: a press before that is dropped, not queued
    spoil(page)
    page.locator(f"#{run}").click()
    expect(page.locator(f"#{box}")).to_be_visible(timeout=RUN_S)
    assert page.locator(f"#{box}").inner_text().count("⚠️") == 1
    for elem_id in outputs:
        expect(page.locator(f"#{elem_id}")).to_have_text("")
    for plot in plots:  # read until the figure script's tidy pass has run (150 ms after the DOM settles)
        left = until(page, lambda: (page.locator(f"#{plot} .main-svg").count(), _visible_notices(page, plot)),
                     lambda found: found == (0, []), timeout_ms=5_000)
        assert left == (0, []), plot


RUN_S = 240_000  # a loaded box: a 32-token decode can take a minute


def _visible_notices(page, elem_id: str) -> list[str]:
    return page.evaluate(
        """(id) => [...document.querySelectorAll(`#${id} .tlab-notice, #${id} ~ .tlab-fig-bar .tlab-notice`)]
            .filter((n) => n.offsetParent !== null && !n.hidden).map((n) => n.textContent)""", elem_id)
