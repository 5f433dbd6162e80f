"""The learner's own wait beside the server's figure, on the Pipelines tab's own page (tab_url): a
Classify request held in the queue (Playwright holds its queue/join for 3 s, as a busy lane would); the
page says how long the learner waited, within 10% of the browser's own click-to-result measurement,
beside the model's time, which the badge labels as the model's alone; the next run's line speaks of it."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from tests.helpers.browser import shot

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)

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


def test_the_shown_wait_is_the_learners_own_when_the_queue_holds_the_request(page, tab_url):
    page.goto(f"{tab_url}?tab=pipelines-classify")
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
