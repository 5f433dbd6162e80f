"""Search tab, from the learner's side, on its own page (tab_url): a refused API-docs build switches the
corpus selector back to the index the session holds and says why in one line; the searches after it run
on that index. The page is served in this process, so the limit is set on the search service itself for
the test (no app process of its own)."""

from __future__ import annotations

import dataclasses

import pytest
from playwright.sync_api import expect

from backend.search.corpora import load_glossary
from backend.search.service import get_service
from tests.helpers.browser import press_again, shot
from tests.helpers.search_page import open_tab

TAB = "search"  # its page holds this tab alone (tab_url, tests/conftest.py)


@pytest.fixture
def small_url(tab_url, monkeypatch):
    """The Search page, whose service refuses any corpus over 300 passages: the glossary fits, the API
    docs do not (the same refusal path as the time budget on a slow box, without waiting for it). As
    TLAB_SEARCH_MAX_PASSAGES=300 would at start-up; put back after the test."""
    service = get_service()
    monkeypatch.setattr(service, "limits", dataclasses.replace(service.limits, max_passages=300))
    yield tab_url


def test_a_refused_corpus_switches_the_selector_back_and_says_why(page, small_url):
    open_tab(page, small_url)
    stats = page.locator("#search-stats")
    expect(stats).to_contain_text("glossary", timeout=120_000)  # the tab opened with the glossary
    count = f"{len(load_glossary()):,}"
    page.locator("#search-corpus input[value=docstrings]").check()
    page.locator("#search-build").click()
    box = page.locator("#search-error")
    expect(box).to_contain_text("over the limit of 300", timeout=120_000)
    note = page.locator("#search-corpus-note")
    expect(note).to_be_visible(timeout=10_000)
    expect(page.locator("#search-corpus input[value=glossary]")).to_be_checked()
    expect(page.locator("#search-corpus input[value=docstrings]")).not_to_be_checked()
    expect(note).to_contain_text("Switched back to the glossary: the API docs could not be indexed")
    expect(note).to_contain_text(f"searches still run on the glossary ({count} passages, Flat (exact) index)")
    # The stats of the refused build are not shown; a search answers from the glossary it names.
    expect(stats).not_to_contain_text("docstrings")
    page.locator("#search-go").click()
    hits = page.locator("#search-results .tlab-hit")
    expect(hits.first).to_be_visible(timeout=60_000)
    expect(page.locator("#search-results")).to_contain_text(f"of {count} passages in glossary")
    expect(page.locator("#search-map .js-plotly-plot")).to_be_visible(timeout=30_000)
    shot(page, "search_refused_switched_back")

    # Choosing a corpus by hand clears the note; a successful build hides it and clears the old hits.
    page.locator("#search-corpus input[value=paste]").check()
    expect(note).to_be_hidden(timeout=10_000)
    page.locator("#search-paste textarea").fill("Owls hunt at night.\n\nTides follow the moon.\n\nBees dance.")
    press_again(page, "#search-build")
    expect(stats).to_contain_text("pasted text", timeout=120_000)
    expect(hits).to_have_count(0)
    expect(page.locator("#search-corpus input[value=paste]")).to_be_checked()
    assert not getattr(page, "blocked_requests", [])
