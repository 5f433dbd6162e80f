"""The learner's own wait beside the server's figure, and a sampled Decoding result that reopens.

- A request held in the queue (Playwright holds its queue/join for 3 s, as a busy lane would): the page
  says how long the learner waited, within 10% of the browser's own click-to-result measurement, beside
  the model's time, which the badge labels as the model's alone.
- A sampled Decoding run with the seed box empty: its link carries the seed it drew, and opening the
  link then pressing Generate gives the same text again.
"""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from tests.browser.conftest import press_again, shot

TAB = "decoding"  # the page of its own-tab tests (tab_url, tests/conftest.py)

HOLD_S = 3.0

# The browser's own measurement: the click's time, and the time this run's own text first shows in the
# result table (a text no earlier run had, so its arrival is this run's result and nothing else)
MEASURE = """([button, table, marker]) => {
  window.__measured = {};
  document.getElementById(button).addEventListener('click', () => { window.__measured.t0 = performance.now(); },
                                                   {capture: true, once: true});
  const host = document.getElementById(table);
  new MutationObserver((_, obs) => {
    if (window.__measured.t0 && host.textContent.includes(marker)) {
      window.__measured.t1 = performance.now();
      obs.disconnect();
    }
  }).observe(host, {childList: true, subtree: true, characterData: true});
}"""
MARKER = "Zebrafinch"


def test_the_shown_wait_is_the_learners_own_when_the_queue_holds_the_request(page, app_url):
    page.goto(f"{app_url}?tab=pipelines-classify")
    page.wait_for_function("() => window.__tlabWait && window.__tlabGlossary")
    page.locator("#pl-classify-run").wait_for()
    # one run first: the model is loaded, so the held run's model time is the model's work alone
    page.locator("#pl-classify-run").click()
    expect(page.locator("#pl-classify-badge")).to_contain_text("model time", timeout=180_000)

    def hold(route):
        time.sleep(HOLD_S)  # the request waits, as it would behind another visitor's job
        route.continue_()

    page.locator("xpath=//*[@id='pl-classify-run']/ancestor::div[.//textarea][1]//textarea").first.fill(
        f"The {MARKER} figure arrived broken and nobody answers my emails.")
    page.route("**/gradio_api/queue/join*", hold)
    page.evaluate(MEASURE, ["pl-classify-run", "pl-classify-table", MARKER])
    page.locator("#pl-classify-run").click()
    line = page.locator("#pl-classify-badge .tlab-wait")
    expect(line).to_have_count(0)  # the click took the earlier run's line away (a busy box gives one to every run)
    page.wait_for_function("() => window.__measured.t1", timeout=120_000)  # the held run's result is in
    page.wait_for_function("(h) => { const l = document.querySelector('#pl-classify-badge .tlab-wait');"
                           " return l && parseFloat(l.dataset.waited) >= h; }", arg=HOLD_S, timeout=30_000)
    page.unroute("**/gradio_api/queue/join*")
    measured = page.evaluate("(window.__measured.t1 - window.__measured.t0) / 1000")
    waited = float(line.get_attribute("data-waited"))
    model = float(line.get_attribute("data-model"))
    badge = page.locator("#pl-classify-badge").inner_text()
    said = float(re.search(r"model time ([\d.]+) s", badge).group(1))
    shown = float(re.search(r"You waited ([\d.]+) s", line.inner_text()).group(1))
    assert measured >= HOLD_S and waited >= HOLD_S, (measured, waited)
    assert abs(waited - measured) <= 0.1 * measured, (waited, measured)
    assert abs(shown - measured) <= 0.1 * measured, (shown, measured)
    assert model == said and model < measured - HOLD_S + 0.5  # the model's own time, from the badge
    assert f"model time {said:.2f} s" in line.inner_text() and "the queue" in line.inner_text()
    shot(page, "guide_wait_line")
    # the next run, not held: the line now speaks of that run (or is gone where the two figures agree)
    page.locator("#pl-classify-run").click()
    page.wait_for_function("""(held) => {
        const line = document.querySelector('#pl-classify-badge .tlab-wait');
        return !line || parseFloat(line.dataset.waited) < held;
    }""", arg=HOLD_S, timeout=60_000)


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
