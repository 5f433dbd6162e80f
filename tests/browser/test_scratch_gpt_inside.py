"""The tiny GPT trained in From scratch, taken apart in Anatomy and stepped through in Decoding: one
click hands the text and the session's model over, Anatomy runs on it and its recomputation holds,
Decoding generates with it, and each badge names the session's model, not the profile's decoder."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot

TAB = ("scratch", "anatomy", "decoding")  # its page holds the three tabs the hand-offs cross (tab_url)
TIMEOUT = 180_000


def test_a_trained_tiny_gpt_opens_in_anatomy_and_is_recomputed(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile(r"^\s*From scratch", re.I)).first.click()
    box = page.locator("#scratch-gpt-steps input[type=number]")
    box.fill("20")
    box.press("Enter")
    expect(page.locator("#scratch-gpt-plan")).to_contain_text("20 steps", timeout=30_000)
    page.locator("#scratch-gpt-go").click()
    expect(page.locator("#scratch-gpt-status")).to_contain_text("Trained all 20 steps", timeout=TIMEOUT)
    params = re.search(r"([\d,]+) parameters", page.locator("#scratch-gpt-status").inner_text()).group(1)
    page.locator("#scratch-gpt-inside-text textarea").fill("The attention layer")
    page.get_by_role("button", name="Open it in Anatomy").click()
    expect(page.locator("#anatomy-tab textarea:not(.tlab-ch-answer)").first).to_have_value("The attention layer", timeout=30_000)
    expect(page.locator("#anatomy-badge")).to_contain_text("tiny GPT you trained", timeout=TIMEOUT)
    expect(page.locator("#anatomy-badge")).to_contain_text(f"{params} parameters")
    expect(page.locator("#anatomy-verdict")).to_contain_text("every layer under", timeout=30_000)
    bars = page.locator("#anatomy-diffs g.trace.bars g.point")
    expect(bars).to_have_count(4, timeout=30_000)  # embeddings + 3 layers, each drawn
    # The link written after the run changed the address; the figure's clip paths must follow it, or
    # the browser draws the plot area empty (axes, no bars).
    page.wait_for_timeout(500)
    stale = page.evaluate("""() => {
      const here = location.href.split('#')[0];
      return [...document.querySelectorAll('#anatomy-diffs [clip-path]')].map(e => e.getAttribute('clip-path'))
        .filter(v => v.includes('http') && !v.includes(here + '#'));
    }""")
    assert stale == [], stale
    shot(page, "scratch_gpt_in_anatomy")
    page.locator("#anatomy-tab").get_by_role("tab", name="Residual stream").click()
    page.locator("#anatomy-tab").get_by_role("tab", name="Layer by layer").click()
    page.wait_for_timeout(1500)
    shot(page, "scratch_gpt_in_anatomy_again")

    # The same model in Decoding: the hand-off fills the prompt and the model box; Generate runs on it.
    page.get_by_role("tab", name=re.compile(r"^\s*From scratch", re.I)).first.click()
    page.get_by_role("button", name="Open it in Decoding").click()
    expect(page.locator("#decoding-prompt textarea")).to_have_value("The attention layer", timeout=30_000)
    expect(page.locator("#decoding-model input, #decoding-model textarea").first).to_have_value(
        re.compile(r"^session:tinygpt-"))
    page.locator("#decoding-run").click()
    expect(page.locator("#decoding-badge")).to_contain_text("tiny GPT you trained", timeout=TIMEOUT)
    expect(page.locator("#decoding-badge")).to_contain_text(f"{params} parameters")
    expect(page.locator("#decoding-stats")).to_contain_text("tokens/s")
    shot(page, "scratch_gpt_in_decoding")
    # The model's name is a capability of this page: it is not written into the link.
    assert "tinygpt" not in page.url
