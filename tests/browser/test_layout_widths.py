"""Every tab at 420 px (a phone) and at 1400 px (a desktop): no figure title overlapping another
label, no clipped plot, no word broken inside a table cell, no view a learner needs hidden behind
an overflow menu ("...").

Cheap by design: one page per width for the whole module, every tab opened on it in turn, and
only the fast runs that draw the figures the issue saw (attention heatmap, bertviz model view,
the logit lens, the decoding plots, the interventions flips, a classifier's bars).
Screenshots: tests/artifacts/polish_<width>_<tab>.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

import app
from tests.browser.conftest import shot
from tests.conftest import new_page

WIDTHS = (420, 1400)
TABS = ("start",) + tuple(key for _, _, key, _ in app.TABS)

# Everything wrong on screen, as strings: [kind, where, detail].
PROBLEMS = r"""() => {
  const out = [];
  const seen = e => e && e.offsetParent !== null && e.getBoundingClientRect().width > 0;
  const box = e => e.getBoundingClientRect();
  const hit = (a, b, slack = 1) => a.width > 0 && b.width > 0 && a.left < b.right - slack && b.left < a.right - slack
      && a.top < b.bottom - slack && b.top < a.bottom - slack;
  const where = e => (e.closest('[id]') || {}).id || e.className;
  // 1. a needed view behind the tabs' overflow menu
  for (const b of document.querySelectorAll('.overflow-menu button[aria-label="More tabs"]'))
    if (seen(b)) out.push(['overflow-menu', where(b), b.parentElement.innerText.trim().slice(0, 80)]);
  // 2. a word broken inside a table cell: the cell is narrower than its longest word
  const canvas = document.createElement('canvas').getContext('2d');
  for (const cell of document.querySelectorAll('table th, table td, [role=gridcell]')) {
    if (!seen(cell)) continue;
    const text = (cell.innerText || '').trim();
    if (!text) continue;
    const style = getComputedStyle(cell.querySelector('span, div, p') || cell);
    canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const word = Math.max(...text.split(/\s+/).map(w => canvas.measureText(w).width));
    const cs = getComputedStyle(cell);
    const room = box(cell).width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (word > room + 2) out.push(['broken-word', where(cell), `${text.slice(0, 30)}: ${Math.round(word)} > ${Math.round(room)}`]);
  }
  // 3. plots
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    if (!seen(plot) || !plot.data || !plot.data.length) continue;
    const id = where(plot);
    const svg = plot.querySelector('svg.main-svg');
    if (!svg) continue;
    const frame = box(svg);
    const holder = plot.closest('.block') || plot.parentElement;
    if (frame.right > box(holder).right + 2 || frame.left < box(holder).left - 2)
      out.push(['clipped-plot', id, `svg ${Math.round(frame.left)}..${Math.round(frame.right)} in ${Math.round(box(holder).left)}..${Math.round(box(holder).right)}`]);
    const titles = [...plot.querySelectorAll('.gtitle, .g-gtitle text')].filter(seen);
    const axisTitles = [...plot.querySelectorAll('.g-xtitle text, .g-ytitle text, .xtitle, .ytitle')].filter(seen);
    const ticks = [...plot.querySelectorAll('.xtick text, .ytick text')].filter(seen);
    const others = [...axisTitles, ...ticks, ...[...plot.querySelectorAll('.modebar')].filter(seen)];
    const label = holder.querySelector('label.block-label, [data-testid="block-label"]');
    if (label && seen(label)) others.push(label);
    for (const t of [...titles, ...axisTitles]) {
      const b = box(t);
      if (b.left < frame.left - 1 || b.right > frame.right + 1 || b.top < frame.top - 1 || b.bottom > frame.bottom + 1)
        out.push(['clipped-title', id, t.textContent.slice(0, 50)]);
    }
    for (const t of titles) for (const o of others)
      if (hit(box(t), box(o), 2)) out.push(['title-overlap', id, `${t.textContent.slice(0, 40)} / ${(o.textContent || o.className || '').toString().slice(0, 30)}`]);
    // tick labels of one axis running into each other ("column labels collide")
    for (const axis of ['xtick', 'ytick']) {
      const ts = [...plot.querySelectorAll(`.${axis} text`)].filter(seen).map(box);
      for (let i = 1; i < ts.length; i++)
        if (hit(ts[i - 1], ts[i], 1)) { out.push(['tick-collision', id, axis]); break; }
    }
    // a small bar's value written sideways
    for (const t of plot.querySelectorAll('.bars .textpoint text, .barlayer text')) {
      const tr = t.getAttribute('transform') || '';
      if (seen(t) && /rotate\((-?90|270)/.test(tr)) { out.push(['vertical-bar-label', id, t.textContent]); break; }
    }
    // a marker cut by the plot area's edge
    const bg = plot.querySelector('.bglayer rect.bg, .bglayer .bg');
    if (bg) {
      const area = box(bg);
      for (const p of plot.querySelectorAll('.scatterlayer .point')) {
        const b = box(p);
        if (!b.width) continue;
        if (b.left < area.left - 0.5 || b.right > area.right + 0.5 || b.top < area.top - 0.5 || b.bottom > area.bottom + 0.5) {
          const cut = plot.querySelector('.scatterlayer .trace') && getComputedStyle(p.closest('.points') || p).clipPath;
          if (p.closest('[clip-path]')) { out.push(['clipped-marker', id, `${Math.round(b.left)},${Math.round(b.top)}`]); break; }
        }
      }
    }
  }
  return out;
}"""


def _tab(page, key: str):
    page.locator(f"#{key}-tab-button, button[role=tab][data-tab-id='{key}']").first.click()


def _runs(page, key: str) -> None:
    """The fast runs that draw what the issue saw on this tab (nothing slow: no training)."""
    if key == "attention":
        page.locator("#attention-run").click()
        expect(page.locator("#attention-badge")).to_contain_text("MiniLM", timeout=120_000)
        for view in ("Model view", "Heatmap", "Head summary", "Positions"):
            page.locator("#attention-tab").first.get_by_role("tab", name=view).click()
            page.wait_for_timeout(600)
            _check(page, key, f"{key}-{view}")
    elif key == "anatomy":
        page.locator("#anatomy-tab").first.get_by_label("decoder").check()
        page.locator("#anatomy-run").click()
        page.locator("#anatomy-tab").first.get_by_role("tab", name="Logit lens").click()
        expect(page.locator("#anatomy-lens .js-plotly-plot")).to_be_visible(timeout=180_000)
    elif key == "decoding":
        page.locator("#decoding-max-new input").first.fill("4")
        page.locator("#decoding-run").click()
        expect(page.locator("#decoding-stats")).to_contain_text(re.compile("sequence log-prob"), timeout=180_000)
    elif key == "interventions":
        page.locator("#interventions-run").click()
        expect(page.locator("#interventions-flips .js-plotly-plot")).to_be_visible(timeout=180_000)
    elif key == "pipelines":
        page.locator("#pl-classify-run").click()
        expect(page.locator("#pl-classify-badge, [id^=pl-classify] .js-plotly-plot").first).to_be_visible(
            timeout=180_000)
    page.wait_for_timeout(800)


FOUND: dict[str, list] = {}


def _check(page, key: str, name: str) -> None:
    width = page.viewport_size["width"]
    for _ in range(12):  # the figure script wraps titles after a draw (debounced): a busy box needs a moment
        page.wait_for_timeout(1000)
        problems = page.evaluate(PROBLEMS)
        if not problems:
            break
    FOUND.setdefault(f"{width}", []).extend([f"{name}: {p}" for p in problems + _clipped_views(page)])
    sideways = page.evaluate("document.documentElement.scrollWidth")
    if sideways > width + 1:
        FOUND[f"{width}"].append(f"{name}: the page scrolls sideways ({sideways}px)")
    shot(page, f"polish_{width}_{name}")


def _clipped_views(page) -> list:
    """The bertviz views (sandboxed srcdoc frames, reached through Playwright): what they drew must
    fit their frame (the model view cut its last layer off)."""
    out = []
    for frame in page.frames:
        if frame == page.main_frame or not frame.url.startswith("about:srcdoc"):
            continue
        try:
            if not frame.frame_element().is_visible():
                continue
            scroll, room = frame.evaluate("() => [document.documentElement.scrollHeight, window.innerHeight]")
        except Exception:  # a frame replaced while we looked
            continue
        if room > 0 and scroll > room + 4:
            out.append(["clipped-view", frame.name or "bertviz", f"content {scroll}px in a {room}px frame"])
    return out


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def wide_page(request, browser, app_url):
    """One page per width for the whole module."""
    page = new_page(browser, viewport={"width": request.param, "height": 900})
    page.goto(app_url)
    expect(page.locator("#start-tab")).to_be_visible(timeout=60_000)
    yield page
    page.context.close()


def test_every_tab_has_no_overlap_clip_broken_word_or_hidden_view(wide_page):
    page = wide_page
    width = page.viewport_size["width"]
    FOUND[f"{width}"] = []
    for key in TABS:
        _tab(page, key)
        expect(page.locator(f"#{key}-tab").first).to_be_visible(timeout=30_000)
        _runs(page, key)
        _check(page, key, key)
    assert FOUND[f"{width}"] == [], "\n".join(FOUND[f"{width}"])
    assert page.blocked_requests == []


def test_the_start_chapters_use_the_phone_width(browser, app_url):
    """At 420 px the chapter text is not a narrow column beside its Try button."""
    page = new_page(browser, viewport={"width": 420, "height": 900})
    try:
        page.goto(app_url)
        text = page.locator("#start-ch1 .start-chapter-text").first
        expect(text).to_be_visible(timeout=60_000)
        assert text.bounding_box()["width"] >= 300, text.bounding_box()
        assert page.blocked_requests == []
    finally:
        page.context.close()
