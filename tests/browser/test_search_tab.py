"""Semantic search tab in headless Chromium: upload a file, build, search; results and map show."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import open_raw_json, overflowing_tables, press_again, shot
from tests.helpers.search_page import open_tab

TAB = "search"  # its page holds this tab alone (tab_url, tests/conftest.py)

DOCS = """Lighthouses guide ships along dangerous coasts with bright rotating lamps.

Sourdough bread rises thanks to wild yeast and lactic acid bacteria.

The violin has four strings tuned in perfect fifths.

Glaciers carve U-shaped valleys as they slowly move downhill.

Honeybees communicate the location of flowers with a waggle dance.
"""


def choose_upload(page):
    """The upload controls show only once "Upload a file" is the corpus."""
    assert page.locator("#search-file").count() == 0 or not page.locator("#search-file").is_visible()
    page.locator("#search-corpus input[value=upload]").check()
    expect(page.locator("#search-file")).to_be_visible(timeout=20_000)


def test_first_search_needs_no_build(page, tab_url):
    open_tab(page, tab_url)
    # The query is prefilled, the upload / paste / column controls are hidden, Build sits on top.
    q = page.locator("#search-query textarea, #search-query input").first
    assert q.input_value() == "how do I keep a model from repeating itself when generating?"
    for hidden in ("#search-file", "#search-paste"):
        assert page.locator(hidden).count() == 0 or not page.locator(hidden).is_visible()
    build_box = page.locator("#search-build").bounding_box()
    knobs = page.get_by_text("Index knobs").first.bounding_box()
    assert build_box["y"] < knobs["y"]
    page.locator("#search-go").click()
    hits = page.locator("#search-results .tlab-hit")
    expect(hits.first).to_be_visible(timeout=120_000)
    assert hits.count() == 5
    expect(page.locator("#search-stats")).to_contain_text("glossary")
    expect(page.locator("#search-stats")).to_contain_text("auto -> Flat (exact)")
    expect(page.locator("#search-map-caption")).to_contain_text("of the variance")
    expect(page.locator("#search-map .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#search-error")).to_be_hidden()
    assert open_raw_json(page, "#search-tab") == 0
    assert overflowing_tables(page, "#search-tab") == []
    shot(page, "search_first_use")
    # The search's own link (declared by the tab): it carries the query and k.
    link = page.locator("#search-link a.tlab-link-a")
    expect(link).to_have_attribute("href", re.compile(r"tab=search.*query=how\+do\+I\+keep.*k=5"))
    href = link.get_attribute("href")
    # A bad query next: the old hits go, one inline message takes their place.
    q.fill("   ")
    press_again(page, "#search-go")
    expect(page.locator("#search-error")).to_contain_text("empty", timeout=30_000)
    expect(page.locator("#search-results .tlab-hit")).to_have_count(0)
    shot(page, "search_error")
    expect(page.locator("#search-link a.tlab-link-a")).to_have_count(0)  # a failed search leaves no link
    # The link opens the tab with the query it carries, and restores without searching.
    page.goto(tab_url + href)
    expect(page.locator("#search-query textarea, #search-query input").first).to_have_value(
        "how do I keep a model from repeating itself when generating?", timeout=30_000)
    expect(page.locator("#search-results .tlab-hit")).to_have_count(0)
    assert not getattr(page, "blocked_requests", [])


def test_compare_and_ask_keep_their_json_collapsed(page, tab_url):
    open_tab(page, tab_url)
    page.locator("#search-go").click()
    expect(page.locator("#search-results .tlab-hit").first).to_be_visible(timeout=120_000)
    page.get_by_text("Compare index types on this corpus").click()
    page.locator("#search-compare").click()
    expect(page.locator("#search-compare-table")).to_contain_text("SQ8", timeout=180_000)
    expect(page.locator("#search-compare-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    # The legend names every configuration in full (no labels drawn over each other).
    legend = page.locator("#search-compare-plot .legendtext").all_text_contents()  # SVG text
    assert "Flat" in legend and "SQ8" in legend and any(t.startswith("HNSW M32") for t in legend)
    assert open_raw_json(page, "#search-tab") == 0
    assert overflowing_tables(page, "#search-tab") == []
    shot(page, "search_compare")


def test_upload_build_search_shows_results_and_map(page, tab_url, tmp_path):
    f = tmp_path / "facts.txt"
    f.write_text(DOCS)
    open_tab(page, tab_url)
    choose_upload(page)
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


def test_bad_upload_shows_readable_error(page, tab_url, tmp_path):
    f = tmp_path / "broken.jsonl"
    f.write_text('{"text": "fine"}\n{not json\n{"text": "also fine"}\n')
    open_tab(page, tab_url)
    choose_upload(page)
    page.locator("#search-file input[type=file]").set_input_files(str(f))
    expect(page.locator("#search-corpus input[value=upload]")).to_be_checked(timeout=20_000)
    page.locator("#search-build").click()
    expect(page.locator("#search-error")).to_contain_text(re.compile(r"not valid JSON objects: line 2"),
                                                          timeout=60_000)
    shot(page, "search_tab_error")
