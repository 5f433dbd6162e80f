"""One result life cycle, seen in a browser on one page: a failed run leaves nothing of the last
result (no "What to notice" line of a figure that is gone), the address bar names the tab on
screen (and a run in a tab the learner left does not take it back), and a hand-off into a tab
blanks the result its earlier run left there."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import settled, shot
from tests.helpers.lifecycle_page import an_error_leaves_nothing
from tests.helpers.lifecycle_page import _visible_notices, RUN_S


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=re.compile(rf"^\W*{name}\W*$")).first.click()


def _address(page) -> str:
    return page.evaluate("() => location.search")


def _wait_address(page, part: str) -> None:
    page.wait_for_function("(part) => location.search.includes(part)", arg=part, timeout=10_000)


def _error_after_a_good_run(page, tab: str, run: str, box: str, outputs: list[str], plots: list[str], spoil) -> None:
    """Start (a good run draws), then an error: one inline message, and nothing of the good run left."""
    _tab(page, tab)
    page.locator(f"#{run}").click()
    expect(page.locator(f"#{outputs[0]}")).not_to_have_text("", timeout=RUN_S)  # its progress, then its result
    settled(page, RUN_S)
    expect(page.locator(f"#{outputs[0]}")).not_to_have_text("")  # the good run's own result, not its progress
    for plot in plots:
        page.locator(f"#{plot} .main-svg").first.wait_for(timeout=RUN_S)
    an_error_leaves_nothing(page, run, box, outputs, plots, spoil)


def test_errors_tab_changes_hand_offs_and_the_address_on_one_page(page, app_url):
    """One whole-page load walks the life cycle: a failed Pipelines run, the address following the tab,
    a hand-off into Decoding; then an error after a good run leaves nothing of it in Why, Interventions,
    Semantic search and (the quick tabs) Anatomy and Attention (Tokenizers': test_shell); then tab change,
    on every tab: the address bar names the tab on screen, whichever tab was before (the issue saw Train,
    Efficiency and Semantic search keep `?tab=interventions...`)."""
    page.goto(app_url)
    _tab(page, "Pipelines")
    page.locator("#pl-classify-run").click()
    expect(page.locator("#pl-classify-badge")).to_contain_text("Served by", timeout=RUN_S)
    expect(page.locator("#pl-classify-plot .tlab-notice")).to_contain_text("wins", timeout=30_000)
    _wait_address(page, "tab=pipelines-classify")

    # an error: the old badge, plot and its notice line go; the message shows once, inline
    page.locator("#pl-classify-run").locator("xpath=ancestor::div[contains(@class,'column')][1]") \
        .locator("textarea").first.fill("")
    page.locator("#pl-classify-run").click()
    expect(page.locator("#pl-classify-error")).to_be_visible(timeout=RUN_S)
    expect(page.locator("#pl-classify-badge")).to_have_text("")
    expect(page.locator("#pipelines-classify-link a")).to_have_count(0)  # no link to the result that is gone
    page.wait_for_function("() => !location.search.includes('text=')", timeout=10_000)
    assert _address(page) == "?tab=pipelines-classify"
    page.wait_for_timeout(500)  # the figure script's tidy pass (150 ms after the DOM settles)
    assert _visible_notices(page, "pl-classify-plot") == []
    shot(page, "lifecycle_error")

    # the address bar follows the tab on screen
    _tab(page, "Decoding")
    _wait_address(page, "tab=decoding")
    assert "pipelines" not in _address(page)
    page.locator("#decoding-run").click()
    expect(page.locator("#decoding-badge")).to_contain_text("Served by", timeout=RUN_S)
    _wait_address(page, "prompt=")
    _tab(page, "Pipelines")
    _wait_address(page, "tab=pipelines")

    # a hand-off into Decoding: its new prompt, and no earlier run's text, stats or badge beside it
    page.get_by_role("tab", name="Text generation").click()
    prompt = "A hand-off carries this prompt"
    page.locator("#pl-generate_text-run").locator("xpath=ancestor::div[contains(@class,'column')][1]") \
        .locator("textarea").first.fill(prompt)
    page.get_by_role("button", name="Step through it in Decoding").click()
    expect(page.locator("#decoding-prompt textarea")).to_have_value(prompt, timeout=30_000)
    expect(page.locator("#decoding-text textarea")).to_have_value("")
    expect(page.locator("#decoding-badge")).to_have_text("")
    _wait_address(page, "tab=decoding")
    shot(page, "lifecycle_handoff")
    assert not page.blocked_requests, page.blocked_requests

    # ---- an error after a good run leaves nothing of it: Why, Interventions, Semantic search
    _error_after_a_good_run(page, "Why", "why-run", "why-error", ["why-summary", "why-badge"],
                            ["why-deletion-plot"], lambda p: p.locator("#why-text textarea").fill(""))
    _error_after_a_good_run(page, "Interventions", "interventions-run", "interventions-error",
                            ["interventions-summary", "interventions-badge"], ["interventions-next"],
                            lambda p: p.locator("#interventions-spec textarea").fill("L99H0=0"))
    shot(page, "lifecycle_error_interventions")
    _error_after_a_good_run(page, "Semantic search", "search-go", "search-error", ["search-results", "search-badge"],
                            ["search-map"], lambda p: p.locator("#search-query textarea").fill(""))

    # ---- the quick tabs: Anatomy and Attention
    first_text = "xpath=(.//textarea)[1]"
    _error_after_a_good_run(page, "Anatomy", "anatomy-run", "anatomy-error", ["anatomy-badge", "anatomy-verdict"],
                            ["anatomy-diffs"], lambda p: p.locator("#anatomy-panel").locator(first_text).fill(""))
    shot(page, "lifecycle_error_anatomy")
    _error_after_a_good_run(page, "Attention", "attention-run", "attention-error", ["attention-badge"], [],
                            lambda p: p.locator("#attention-tab textarea:not(.tlab-ch-answer)").first.fill(""))
    expect(page.locator("#attention-link a")).to_have_count(0)  # no link to the result that is gone

    # ---- the address names every tab it shows
    import app

    tabs = [(title, key) for title, _, key, _ in app.TABS]
    _tab(page, "Interventions")  # the old test loaded ?tab=interventions: here the same tab is reached by a click
    _wait_address(page, "tab=interventions")
    order = tabs + [("Start", "start")] + list(reversed(tabs))  # every tab, reached from two different tabs
    for title, key in order:
        _tab(page, title)
        page.wait_for_function("(key) => new URLSearchParams(location.search).get('tab')?.split('-')[0] === key",
                               arg=key.split("-")[0], timeout=10_000)
        tab = page.evaluate("() => new URLSearchParams(location.search).get('tab')")
        assert tab.split("-")[0] == key.split("-")[0], (title, tab)
