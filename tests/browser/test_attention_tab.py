"""The Attention tab in headless Chromium, with every non-localhost request blocked.

The bertviz views must draw their SVG from the inlined libraries, the plots must show, and
the injection text must show as text without opening a dialog (in the page or the iframe).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.browser import open_raw_json, overflowing_tables, until

TAB = "attention"  # its page holds this tab alone (tab_url, tests/conftest.py)

INJECTION = '</script><img src=x onerror=alert(1)> "quotes" \\ backslash \u2028 end'
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
TIMEOUT = 90_000  # first use loads the model


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"attention_{name}.png"), full_page=False)


@pytest.fixture
def tab(page, tab_url):
    dialogs: list[str] = []
    frame_requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: frame_requests.append(r.url) if r.frame != page.main_frame else None)
    page.goto(tab_url)
    attention_tab = page.get_by_role("tab", name=re.compile(r"^\W*Attention\W*$", re.I))
    attention_tab.first.click()  # auto-waits until the app has rendered its tabs
    page.get_by_role("button", name="Show attention").wait_for(timeout=30_000)
    page.dialogs, page.frame_requests = dialogs, frame_requests
    page.ui = page.locator("#attention-tab")  # scope: other tabs have similar labels
    return page


def _show(page) -> None:
    page.ui.get_by_role("button", name="Show attention").click()


def _lines(page, view: str):
    frame = page.frame_locator(f"#attention-{view}-view iframe")
    frame.locator("svg line").first.wait_for(state="attached", timeout=TIMEOUT)
    return frame


def test_head_and_model_view_draw_offline(tab):
    page = tab
    _show(page)
    frame = _lines(page, "head")
    assert frame.locator("svg line").count() > 100  # 13 tokens x 13 x 12 heads of lines
    texts = frame.locator("svg text").all_text_contents()
    assert "fruit" in texts and "[CLS]" in texts
    page.wait_for_timeout(500)
    _shot(page, "head_view")
    page.ui.get_by_role("tab", name="Model view").click()
    model = _lines(page, "model")
    assert model.locator("svg line").count() > 1000  # 6 x 12 thumbnails
    _shot(page, "model_view")
    page.ui.get_by_role("tab", name="Heatmap").click()
    page.locator("#attention-heatmap .main-svg").first.wait_for(timeout=TIMEOUT)
    assert page.locator("#attention-heatmap .heatmaplayer, #attention-heatmap .hm").count() >= 1
    _shot(page, "heatmap")
    page.ui.get_by_role("tab", name="Head summary").click()
    page.locator("#attention-summary .main-svg").first.wait_for(timeout=TIMEOUT)
    page.ui.get_by_role("tab", name="Positions").click()  # filled by the same press: no second button
    page.ui.get_by_text("Learned position embeddings", exact=True).wait_for(timeout=TIMEOUT)
    assert page.locator("#attention-pos-learned").is_visible() and not page.locator("#attention-pos-rotary").is_visible()
    _shot(page, "positions_encoder")
    assert page.frame_requests == []  # the views fetched nothing (no CDN, no font)
    blocked = [u for u in getattr(page, "blocked_requests", []) if any(k in u for k in ("d3", "jquery", "require"))]
    assert blocked == []
    assert page.dialogs == []


def test_decoder_view_and_math(tab):
    page = tab
    page.ui.get_by_label("decoder").check()
    _show(page)
    frame = _lines(page, "head")
    assert frame.locator("svg line").count() > 50
    page.ui.get_by_role("tab", name="Step by step (the math)").click()  # filled by Show attention
    summary = page.locator("#attention-math-summary")
    summary.get_by_text("under 1e-4").wait_for(timeout=TIMEOUT)
    assert "Grouped KV" in summary.inner_text()
    page.locator("#attention-math-matrices .main-svg").first.wait_for(timeout=TIMEOUT)
    _shot(page, "math")
    page.ui.get_by_role("tab", name="Positions").click()
    page.ui.get_by_text("Rotary (RoPE)").first.wait_for(timeout=TIMEOUT)
    assert "no position vectors" in page.locator("#attention-positions").inner_text()
    page.locator("#attention-pos-rotary .main-svg").first.wait_for(timeout=TIMEOUT)
    assert not page.locator("#attention-pos-learned").is_visible()  # no empty "Learned positions" frame
    _shot(page, "positions_decoder")
    page.ui.get_by_role("tab", name="Head summary").click()
    rows = page.locator("#attention-top-heads .virtual-body [role=row]")
    rows.first.wait_for(timeout=TIMEOUT)
    assert rows.count() == 5 * 3  # one row per listed head: 3 per metric, none lost to a '|'
    assert page.locator("#attention-top-heads").get_by_text("<|im_start|>", exact=False).count() >= 1
    assert overflowing_tables(page, "#attention-tab") == []
    assert open_raw_json(page, "#attention-tab") == 0
    _shot(page, "head_summary_decoder")


def test_injection_renders_as_text(tab):
    page = tab
    page.ui.get_by_label("Text (sentence A)").fill(INJECTION)
    page.ui.get_by_label("Sentence B (optional: makes a pair)").fill("")
    _show(page)
    frame = _lines(page, "head")
    texts = frame.locator("svg text").all_text_contents()
    assert "<" in texts and "script" in texts and '"' in texts and "\\" in texts
    page.wait_for_timeout(1500)  # give any injected handler time to fire
    assert frame.locator("img").count() == 0 and page.locator("img[src='x']").count() == 0
    page.ui.get_by_role("tab", name="Heatmap").click()
    page.locator("#attention-heatmap .main-svg").first.wait_for(timeout=TIMEOUT)
    _shot(page, "injection")
    assert page.dialogs == []
    assert page.frame_requests == []


def test_over_cap_shows_message(tab):
    page = tab
    page.ui.get_by_label("Text (sentence A)").fill("word " * 120)
    page.ui.get_by_label("Sentence B (optional: makes a pair)").fill("")
    _show(page)
    page.locator("#attention-head-view").get_by_text("at most 96").wait_for(timeout=TIMEOUT)
    page.ui.get_by_label("Text (sentence A)").fill("word " * 300)
    _show(page)
    error = page.locator("#attention-error")
    error.get_by_text("256").wait_for(timeout=TIMEOUT)  # one inline message names the cap
    assert "at most 96" not in page.locator("#attention-head-view").inner_text()  # the old result is gone
    assert page.locator("#attention-badge").inner_text().strip() == ""
    _shot(page, "over_cap")


def test_a_good_result_then_an_error_leaves_no_stale_result(tab):
    page = tab
    _show(page)
    _lines(page, "head")
    page.ui.get_by_label("Text (sentence A)").fill("")
    page.ui.get_by_label("Sentence B (optional: makes a pair)").fill("")
    _show(page)
    page.locator("#attention-error").get_by_text(re.compile("empty|text", re.I)).wait_for(timeout=TIMEOUT)
    assert page.locator("#attention-head-view iframe").count() == 0
    assert page.locator("#attention-badge").inner_text().strip() == ""
    assert page.locator("#attention-tab [data-testid='block-label'] + .error, #attention-tab .error-badge").count() == 0
    _shot(page, "error_after_result")


def test_examples_are_for_learners_only(tab):
    """The injection string is a test input, not something to offer a learner."""
    examples = tab.ui.locator(".gallery, table").first.inner_text()
    assert "time flies like an arrow" in examples and "onerror" not in tab.ui.first.inner_text()


def test_heatmap_title_is_not_covered_by_a_label(tab):
    page = tab
    _show(page)
    page.ui.get_by_role("tab", name="Heatmap").click()
    page.locator("#attention-heatmap .gtitle").first.wait_for(timeout=TIMEOUT)
    overlap = page.evaluate("""() => {
        const root = document.querySelector('#attention-heatmap');
        const t = root.querySelector('.gtitle').getBoundingClientRect();
        return [...root.querySelectorAll('[data-testid="block-label"]')].filter(l => {
            const r = l.getBoundingClientRect();
            return r.width > 0 && r.left < t.right && t.left < r.right && r.top < t.bottom && t.top < r.bottom;
        }).length; }""")
    assert overlap == 0
    assert "layer 0, head 0" in page.locator("#attention-heatmap .gtitle").first.text_content()
    _shot(page, "heatmap_title")


def _frame_fit(page) -> dict:
    frame = next(f for f in page.frames if f != page.main_frame and f.url.startswith("about:srcdoc"))
    return frame.evaluate("""() => {
        const texts = [...document.querySelectorAll('svg text')].map(t => t.getBoundingClientRect());
        return {width: document.documentElement.clientWidth, height: window.innerHeight,
                scroll: document.documentElement.scrollHeight,
                right: Math.max(...texts.map(r => r.right)), bottom: Math.max(...texts.map(r => r.bottom))}; }""")


def test_head_view_uses_the_width(tab):
    page = tab
    _show(page)
    _lines(page, "head")
    fit = until(page, lambda: _frame_fit(page), lambda f: f["right"] > 0.6 * f["width"])
    assert fit["right"] > 0.6 * fit["width"], fit  # bertviz's fixed 335 px would be under 30% at 1400 px
    assert fit["bottom"] <= fit["height"] and fit["scroll"] <= fit["height"], fit


def test_phone_frame_shows_the_last_token(page, tab_url):
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile(r"^\W*Attention\W*$", re.I)).first.click()
    page.ui = page.locator("#attention-tab")
    page.get_by_role("button", name="Show attention").click()
    _lines(page, "head")
    page.wait_for_timeout(500)  # a fixed wait, not a poll: "nothing cut" may hold for a moment before the layout
    fit = _frame_fit(page)
    assert fit["bottom"] <= fit["height"] and fit["scroll"] <= fit["height"], fit  # nothing cut at the bottom
    page.locator("#attention-head-view").scroll_into_view_if_needed()
    _shot(page, "phone_head_view")
