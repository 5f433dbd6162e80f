"""Helpers of the browser tier (screenshots, table and JSON checks); the `browser` and `page`
fixtures are in tests/conftest.py."""

from __future__ import annotations

from tests.conftest import ARTIFACTS


def shot(page, name: str) -> None:
    """Save a screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


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
