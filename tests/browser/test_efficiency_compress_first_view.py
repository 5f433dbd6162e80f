"""The Efficiency tab's chapter 8 section as it opens (the section served alone): the default run whole with
no click (every variant in the table, both plots), the controls showing the settings that run used, the
verdicts the run's claims allow and no others, and on a 390-px phone no figure with parts overlapping."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import new_page, shot, until
from tests.helpers.figure_boxes import figure_problems
from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def section_url():
    from components.efficiency import compress_ui
    from components.shell import figure_tools

    def build():
        figure_tools()  # the page's figure script and styles, as app.py places them
        compress_ui.build()

    with served_tab(build, themed=True) as url:
        yield url


@pytest.fixture(scope="module")
def default_run():
    from backend.efficiency import compress

    return compress.default_run("all")


@pytest.mark.parametrize("width", [1400, 390])
def test_the_section_opens_on_the_default_run_whole(browser, section_url, default_run, width):
    r = default_run
    page = new_page(browser, viewport={"width": width, "height": 1000})
    try:
        page.goto(section_url)
        table = page.locator("#compress-table")
        for row in r["rows"]:  # every variant, with no click
            expect(table).to_contain_text(row["variant"], timeout=60_000)
        c = r["controls"]
        for key in ("temperature", "alpha", "layers", "epochs"):
            shown = page.locator(f"#compress-{key} input[type=number]").input_value()
            assert float(shown) == float(c[key]), (key, shown, c[key])
        summary = page.locator("#compress-summary")
        fastest = r["claims"]["fastest"]
        if fastest["key"] is None:
            expect(summary).to_contain_text("No variant is named the fastest")
            expect(summary).not_to_contain_text("Fastest:")
        for t in r["targets"].values():
            expect(summary).to_contain_text("cannot tell from this run" if t["status"] == "cannot tell"
                                            else f": {t['status']}" + (":" if t.get('why') else ")"))
        expect(summary).to_contain_text(f"Accuracy is measured on {r['test_size']} test sentences")
        for plot in ("compress-scatter", "compress-pruning"):
            expect(page.locator(f"#{plot} .js-plotly-plot .legend")).to_be_visible(timeout=30_000)
        both = lambda: figure_problems(page, "#compress-scatter") + figure_problems(page, "#compress-pruning")  # noqa: E731
        problems = until(page, both, lambda found: found == [])  # figures.js's pass after the first draw
        assert problems == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        shot(page, f"efficiency_compress_first_view_{width}")
    finally:
        page.context.close()
