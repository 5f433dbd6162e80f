"""Semantic search tab in headless Chromium: upload a file, build, search; results and map show."""

from __future__ import annotations

import re

from playwright.sync_api import expect

try:
    from tests.browser.conftest import shot
except ImportError:  # the helper lives with the lead's fixtures; keep the test runnable
    def shot(page, name):
        import os
        os.makedirs("tests/artifacts", exist_ok=True)
        page.screenshot(path=f"tests/artifacts/{name}.png", full_page=True)

DOCS = """Lighthouses guide ships along dangerous coasts with bright rotating lamps.

Sourdough bread rises thanks to wild yeast and lactic acid bacteria.

The violin has four strings tuned in perfect fifths.

Glaciers carve U-shaped valleys as they slowly move downhill.

Honeybees communicate the location of flowers with a waggle dance.
"""


def open_tab(page, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile("search", re.I)).first.click()
    expect(page.locator("#search-build")).to_be_visible(timeout=30_000)


def test_upload_build_search_shows_results_and_map(page, app_url, tmp_path):
    f = tmp_path / "facts.txt"
    f.write_text(DOCS)
    open_tab(page, app_url)
    page.locator("#search-file input[type=file]").set_input_files(str(f))
    # Uploading switches the corpus choice to "Upload a file".
    expect(page.locator("#search-corpus input[value=upload]")).to_be_checked(timeout=20_000)
    page.locator("#search-build").click()
    stats = page.locator("#search-stats")
    expect(stats).to_contain_text("index over", timeout=120_000)
    expect(stats).to_contain_text("facts.txt")
    expect(stats).to_contain_text("recall@")
    page.locator("#search-query textarea, #search-query input").first.fill(
        "how do insects tell each other where the food is")
    page.locator("#search-go").click()
    hits = page.locator("#search-results .tlab-hit")
    expect(hits.first).to_be_visible(timeout=60_000)
    expect(hits.first).to_contain_text("waggle dance")
    assert hits.count() == 5
    expect(page.locator("#search-map .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#search-badge")).to_contain_text("MiniLM")
    shot(page, "search_tab_results")
    assert not getattr(page, "blocked_requests", [])


def test_bad_upload_shows_readable_error(page, app_url, tmp_path):
    f = tmp_path / "broken.jsonl"
    f.write_text('{"text": "fine"}\n{not json\n{"text": "also fine"}\n')
    open_tab(page, app_url)
    page.locator("#search-file input[type=file]").set_input_files(str(f))
    expect(page.locator("#search-corpus input[value=upload]")).to_be_checked(timeout=20_000)
    page.locator("#search-build").click()
    expect(page.get_by_text(re.compile(r"not valid JSON objects: line 2"))).to_be_visible(timeout=60_000)
    shot(page, "search_tab_error")
