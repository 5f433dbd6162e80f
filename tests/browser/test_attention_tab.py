"""The Attention tab in headless Chromium, with every non-localhost request blocked.

The bertviz views must draw their SVG from the inlined libraries, the plots must show, and
the injection text must show as text without opening a dialog (in the page or the iframe).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

INJECTION = '</script><img src=x onerror=alert(1)> "quotes" \\ backslash \u2028 end'
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
TIMEOUT = 90_000  # first use loads the model


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"attention_{name}.png"), full_page=False)


@pytest.fixture
def tab(page, app_url):
    dialogs: list[str] = []
    frame_requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: frame_requests.append(r.url) if r.frame != page.main_frame else None)
    page.goto(app_url)
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
    page.ui.get_by_role("tab", name="Positions").click()
    page.ui.get_by_role("button", name="Show positional encodings").click()
    page.ui.get_by_text("Learned position embeddings", exact=True).wait_for(timeout=TIMEOUT)
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
    page.ui.get_by_role("tab", name="Step by step (the math)").click()
    page.ui.get_by_role("button", name="Compute step by step").click()
    summary = page.locator("#attention-math-summary")
    summary.get_by_text("under 1e-4").wait_for(timeout=TIMEOUT)
    assert "Grouped KV" in summary.inner_text()
    _shot(page, "math")
    page.ui.get_by_role("tab", name="Positions").click()
    page.ui.get_by_role("button", name="Show positional encodings").click()
    page.ui.get_by_text("Rotary (RoPE)").first.wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() >= 2  # sinusoids + rotary frequencies
    _shot(page, "positions_decoder")


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
    page.get_by_text("256").first.wait_for(timeout=TIMEOUT)  # the error toast names the cap
    _shot(page, "over_cap")
