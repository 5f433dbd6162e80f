"""A Pipelines plot on the Pipelines tab's own page (tab_url): it downloads as PNG and SVG from a visible
control with no network, and says what to notice, a line true for the figure."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.figure_boxes import PLOTS, download_figure

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_a_plot_downloads_as_png_and_svg_offline_and_says_what_to_notice(page, tab_url):
    page.goto(tab_url + "?tab=pipelines-classify&text=I+loved+this+film%2C+every+minute+of+it.")
    note = page.locator("#pl-classify-plot .tlab-notice")
    expect(note).to_contain_text("What to notice:", timeout=120_000)
    (plot_id, shown, carried, buttons), = page.evaluate(PLOTS, "#pl-classify-plot")
    assert plot_id == "pl-classify-plot" and buttons == 2
    assert shown == "What to notice: " + carried
    # the line is true for the figure: its winner and score are the longest bar's
    bars = page.evaluate("""() => { const d = document.querySelector('#pl-classify-plot .js-plotly-plot').data[0];
        const i = d.x.indexOf(Math.max(...d.x)); return [d.y[i], d.x[i]]; }""")
    assert f"'{bars[0]}' wins with {bars[1]:.2f}" in shown, (bars, shown)
    png = download_figure(page, "pl-classify-plot", "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000
    svg = download_figure(page, "pl-classify-plot", "svg")
    assert svg.lstrip()[:4] == b"<svg" and b"wins" not in svg  # the figure itself, not the page
    assert page.blocked_requests == []
    shot(page, "pipelines_classify_notice")
