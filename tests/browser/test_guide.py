"""A sampled Decoding result that reopens, on the Decoding tab's own page (tab_url): a run with the seed
box empty writes a link that carries the seed it drew, and opening the link then pressing Generate gives
the same text again. (The learner's own wait beside the server's figure, a request held in the queue:
tests/browser/test_guide_wait_line.py, on the Pipelines tab's page.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import press_again, shot

TAB = "decoding"  # the page of its own-tab tests (tab_url, tests/conftest.py)

def _text(page) -> str:
    return page.locator("#decoding-text textarea").input_value()


def test_a_sampled_decoding_link_reopens_the_same_text(page, tab_url):
    page.goto(f"{tab_url}?tab=decoding&prompt=The+weather+today+is&strategy=sample&max_new=8&top_k=50")
    page.wait_for_function("() => window.__tlabWait")
    # the page's load event applies the link (on a loaded box it may take a while to answer)
    expect(page.locator("#decoding-tab-button")).to_have_attribute("aria-selected", "true", timeout=180_000)
    seed_box = page.locator("#decoding-seed textarea, #decoding-seed input").first
    expect(seed_box).to_be_editable(timeout=60_000)
    assert seed_box.input_value() == ""  # random: the run draws a seed and reports it
    page.locator("#decoding-run").click()
    stats = page.locator("#decoding-stats")
    expect(stats).to_contain_text("enter it to get the same text again", timeout=240_000)
    seed = re.search(r"seed (\d+) \(enter it", stats.inner_text()).group(1)
    first = _text(page)
    assert first.strip()
    link = page.locator("#decoding-link a.tlab-link-a")
    expect(link).to_have_attribute("href", re.compile(rf"[?&]seed={seed}(&|$)"))
    href = link.get_attribute("href")
    assert seed_box.input_value() == ""  # the box stays empty: Generate again draws anew
    page.goto(tab_url + href)  # the link, opened: the seed it carries is in the box
    seed_box = page.locator("#decoding-seed textarea, #decoding-seed input").first
    expect(seed_box).to_have_value(seed, timeout=180_000)
    press_again(page, "#decoding-run")
    expect(page.locator("#decoding-stats")).to_contain_text(f"seed {seed} (enter it", timeout=240_000)
    assert _text(page) == first
    shot(page, "guide_decoding_link_reopened")
