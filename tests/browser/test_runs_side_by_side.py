"""Runs kept side by side, from the learner's side: two sampled Decoding runs with different
seeds are kept in "Your runs", open side by side with their differences marked, and each run's link
reopens that run in the same page (the runs stay), its seed in the box: Generate gives its text again.
One load of the Decoding tab's own page (tab_url), 6-token generations."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot

TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)

LINK = "?tab=decoding&prompt=The+weather+today+is&strategy=sample&max_new=6&top_k=50"


def _words(text: str) -> str:
    return " ".join(text.split())


def _run(page, seed: str, n: int) -> str:
    """Generate with `seed` in the box as run `n`; the generated text, once "Your runs" has kept it."""
    box = page.locator("#decoding-seed textarea, #decoding-seed input").first
    if box.input_value() != seed:
        box.fill(seed)
    page.locator("#decoding-run").click()
    expect(page.locator("#decoding-stats")).to_contain_text(f"seed {seed} (enter it", timeout=240_000)
    text = page.locator("#decoding-text textarea").input_value()
    assert text.strip()
    # kept: the view then shows this run (clicking before it re-renders would hit the new view's column)
    expect(page.locator("#decoding-runs-pick input[type=checkbox]")).to_have_count(n, timeout=30_000)
    expect(page.locator(f"#decoding-runs-view .tlab-run[data-run='{n}']")).to_have_count(1)
    return text


def test_two_decoding_runs_open_side_by_side_and_each_link_reopens_its_text(page, tab_url):
    page.goto(tab_url + LINK)
    expect(page.locator("#decoding-tab-button")).to_have_attribute("aria-selected", "true", timeout=180_000)
    seed_box = page.locator("#decoding-seed textarea, #decoding-seed input").first
    expect(seed_box).to_be_editable(timeout=60_000)
    page.locator("#decoding-runs").get_by_text("Your runs").first.click()  # open: a closed accordion draws nothing
    first = _run(page, "1", 1)
    second = _run(page, "2", 2)

    view = page.locator("#decoding-runs-view")
    runs = view.locator(".tlab-run")
    expect(runs).to_have_count(2, timeout=30_000)
    one, two = view.locator(".tlab-run[data-run='1']"), view.locator(".tlab-run[data-run='2']")
    assert _words(first) in _words(one.locator(".tlab-run-text").inner_text())
    assert _words(second) in _words(two.locator(".tlab-run-text").inner_text())
    assert "seed 1" in one.inner_text() and "seed 2" in two.inner_text()  # the titles say what each run set
    # the differences are marked on both sides: at least the seed each stats line names, as a number
    for run, seed in ((one, "1"), (two, "2")):
        numbers = [m.strip() for m in run.locator("mark.tlab-run-number").all_inner_texts()]
        assert seed in numbers, numbers
    if _words(first) != _words(second):
        assert one.locator("mark").count() > 1 and two.locator("mark").count() > 1
    picked = page.locator("#decoding-runs-pick input[type=checkbox]:checked")
    expect(picked).to_have_count(2)
    shot(page, "runs_side_by_side")

    # Each run's link reopens that run here: its inputs (its seed) back, no new page, the kept runs stay.
    url = page.url
    for n, seed, text, new in ((1, "1", first, 3), (2, "2", second, 4)):
        view.locator(f".tlab-run[data-run='{n}'] a.tlab-run-open").click()
        expect(seed_box).to_have_value(seed, timeout=60_000)
        expect(page.locator("#decoding-text textarea")).to_have_value("")  # the shown result went with the reopen
        assert _words(_run(page, seed, new)) == _words(text)
        assert page.url.split("?")[0] == url.split("?")[0] and "reopened" not in page.url
    assert re.search(r"run 4 .* seed 2", page.locator("#decoding-runs-pick").inner_text())
