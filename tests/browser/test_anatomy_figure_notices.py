"""Every Anatomy figure on the Anatomy tab's own page (tab_url): its "What to notice" line (the one the
figure carries) and its two download buttons, and no title running into its axes or another title."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.helpers.browser import shot, until
from tests.helpers.figure_boxes import OVERLAPS, PLOTS

TAB = "anatomy"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_every_anatomy_figure_has_its_line_and_no_title_overlaps(page, tab_url):
    page.goto(tab_url + "?tab=anatomy&text=The+cat+sat+on+the+mat+because+it+was&role=decoder")
    expect(page.locator("#anatomy-diffs .tlab-notice")).to_contain_text("hidden states", timeout=180_000)
    for tab in ("Layer by layer", "Residual stream", "Masked attention", "Logit lens", "Parameter budget"):
        page.locator("#anatomy-tab").get_by_role("tab", name=tab, exact=True).click()
        plots = until(page, lambda: page.evaluate(PLOTS, "#anatomy-tab"), lambda found: found and all(
            buttons == 2 and carried and shown == "What to notice: " + carried for _, shown, carried, buttons in found))
        assert plots, tab
        for plot_id, shown, carried, buttons in plots:
            assert buttons == 2 and carried and shown == "What to notice: " + carried, (plot_id, shown)
        assert until(page, lambda: page.evaluate(OVERLAPS, "#anatomy-tab"), lambda found: found == []) == []
    shot(page, "anatomy_figure_notices")
