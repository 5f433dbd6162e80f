"""Every glossary term on screen is one hover (desktop, 1400 px) or one tap (phone, 420 px) from its
definition, on every tab, and the definition shown is the glossary module's own text.

The test reads the page itself: it collects the visible text outside controls (buttons, links, tabs,
inputs, choices and code are left alone: a tap there keeps doing what it did), finds the terms with the
glossary's Python patterns, and for each term points at one of its occurrences and reads the box."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app import TABS
from components.shell.glossary import GLOSSARY, find_terms
from tests.helpers.browser import shot
from tests.helpers.app import ARTIFACTS
from tests.helpers.browser import new_page
KEYS = ["start"] + [key for _, _, key, _ in TABS]
TITLES = {"start": "Start", **{key: title for title, _, key, _ in TABS}}

# What a learner reads: visible text nodes, not inside a control or code (the documented rule)
VISIBLE_TEXT = """() => {
  const controls = 'a, button:not(th button), input, textarea, select, option, code, pre, svg, script, style, '
    + '[role=tab], [role=option], [role=listbox], label:has(input[type=checkbox]), label:has(input[type=radio]), '
    + '.cm-editor, .tlab-gloss-pop, .tlab-fig-keep';
  const nodes = [], texts = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walk.nextNode())) {
    const el = n.parentElement;
    if (!el || !n.data.trim() || el.closest(controls) || !el.checkVisibility({visibilityProperty: true})) continue;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    nodes.push(n); texts.push(n.data);
  }
  window.__testNodes = nodes;
  return texts;
}"""

# The centre of characters [a, b) of node i, scrolled into view (the first line box of the term)
POINT = """([i, a, b]) => {
  const range = document.createRange();
  range.setStart(window.__testNodes[i], a);
  range.setEnd(window.__testNodes[i], b);
  const el = window.__testNodes[i].parentElement;
  if (range.getBoundingClientRect().bottom > innerHeight - 60 || range.getBoundingClientRect().top < 60)
    el.scrollIntoView({block: 'center'});
  const r = range.getClientRects()[0];
  if (!r) return null;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {x: r.left + r.width / 2, y: r.top + r.height / 2, covered: !hit || !el.contains(hit) && hit !== el};
}"""


def _open_tab(page, app_url, key):
    if not page.evaluate("() => !!window.__tlabGlossary"):
        page.goto(app_url)
        page.wait_for_function("() => window.__tlabGlossary && window.__tlabWait")
    tab = page.get_by_role("tab", name=re.compile(rf"^\W*{TITLES[key]}\W*$")).first
    for _ in range(3):  # a click before the page's load event answered is undone by its restore: click again
        tab.click()
        try:
            expect(tab).to_have_attribute("aria-selected", "true", timeout=5000)
            break
        except AssertionError:
            continue
    expect(tab).to_have_attribute("aria-selected", "true")
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(1200)  # the tab's own late renders (plots, tables) and the glossary's scan


def _occurrences(page):
    """{term: (node index, start, end)}: the first visible occurrence of each term the test finds."""
    first = {}
    for i, text in enumerate(page.evaluate(VISIBLE_TEXT)):
        for term, a, b in find_terms(text):
            first.setdefault(term, (i, a, b))
    return first


def _check_tab(page, key, point_at) -> list[str]:
    """Point at every term found on the tab; returns what went wrong (empty: all defined)."""
    missing = []
    found = _occurrences(page)
    for term, where in found.items():
        at = page.evaluate(POINT, list(where))
        if at is None or at["covered"]:  # behind a sticky header or an open menu: not one hover away now
            continue
        point_at(at["x"], at["y"])
        try:
            page.wait_for_function("(t) => { const s = window.__tlabGlossary.shown(); return s && s.term === t; }",
                                   arg=term, timeout=10_000)  # a loaded CI box answered a tap in over 3 s
        except Exception:
            missing.append(f"{key}: '{term}' shows no definition")
            continue
        shown = page.evaluate("window.__tlabGlossary.shown()")
        if shown["definition"] != GLOSSARY[term]:
            missing.append(f"{key}: '{term}' shows {shown['definition']!r}")
        page.evaluate("window.__tlabGlossary.hide()")
    return missing, len(found)


@pytest.fixture()
def touch_page(browser):
    """The page fixture's page (1400 x 1000, guarded, settled, failed on an uncaught JS error) with a
    touchscreen: one whole-page load serves the desktop hovers and, at phone size, the taps."""
    pg = new_page(browser, has_touch=True)
    yield pg
    errors = list(pg.page_errors)
    pg.context.close()
    assert errors == [], f"uncaught errors in the page's JS: {errors}"


def test_every_term_is_one_hover_away_on_a_desktop_and_one_tap_away_on_a_phone(touch_page, app_url):
    """One whole-page load: every tab at 1400 px by hover, a plot's title terms, then at 420 px every tab
    by tap, and a tap on a term neither sorts a table nor breaks links and inputs."""
    page = touch_page
    # ---- desktop (1400 px): every term on every tab one hover away
    page.set_viewport_size({"width": 1400, "height": 1000})
    problems, counts = [], {}
    for key in KEYS:
        _open_tab(page, app_url, key)
        missing, counts[key] = _check_tab(page, key, lambda x, y: page.mouse.move(x, y))
        problems += missing
        if key in ("start", "decoding", "efficiency"):
            page.mouse.move(10, 10)
            shot(page, f"glossary_{key}_desktop")
    assert not problems, problems
    assert all(counts[k] >= 3 for k in KEYS), counts  # every tab writes some of the book's terms
    # the box closes when the pointer leaves the term, and a link's words get no box
    page.mouse.move(5, 5)
    expect(page.locator(".tlab-gloss-pop")).to_be_hidden()

    # ---- a plot's title terms are listed under it and defined (SVG text: a hoverable line under the plot;
    # a figure drawn here by hand, with Plotly's own class names, stands in for a run's plot)
    _open_tab(page, app_url, "efficiency")
    page.evaluate("""() => {
        const holder = document.createElement('div');
        holder.id = 'test-fig-holder';
        holder.innerHTML = '<div class="js-plotly-plot" style="height:40px"><svg width="300" height="40">'
          + '<text class="gtitle" y="20">Decoder: latency against perplexity</text>'
          + '<text class="xtitle" y="35">ms per token (int8)</text></svg></div>';
        document.querySelector('#efficiency-run').parentElement.append(holder);
        window.__tlabGlossary.scan();
    }""")
    line = page.locator("#test-fig-holder > .tlab-gloss-fig")
    expect(line).to_have_text("Terms in this figure: decoder, latency, perplexity, token, int8")
    line.scroll_into_view_if_needed()
    box = page.evaluate("""() => {
        const n = document.querySelector('#test-fig-holder > .tlab-gloss-fig').firstChild;
        const a = n.data.indexOf('perplexity'); const r = document.createRange();
        r.setStart(n, a); r.setEnd(n, a + 10); const b = r.getClientRects()[0];
        return {x: b.left + b.width / 2, y: b.top + b.height / 2};
    }""")
    page.mouse.move(box["x"], box["y"])
    page.wait_for_function("() => (window.__tlabGlossary.shown() || {}).term === 'perplexity'")
    assert page.evaluate("window.__tlabGlossary.shown()")["definition"] == GLOSSARY["perplexity"]
    page.evaluate("document.querySelector('#test-fig-holder .js-plotly-plot').remove(); window.__tlabGlossary.scan()")
    expect(line).to_have_count(0)  # the plot gone, its line goes with it
    page.evaluate("document.getElementById('test-fig-holder').remove()")

    # ---- phone (420 px): every term on every tab one tap away
    page.set_viewport_size({"width": 420, "height": 900})
    problems = []
    for key in KEYS:
        _open_tab(page, app_url, key)
        problems += _check_tab(page, key, lambda x, y: page.touchscreen.tap(x, y))[0]
        if key in ("start", "decoding"):  # the screen as a learner holds it, one definition open
            where = next(iter(_occurrences(page).values()))
            at = page.evaluate(POINT, list(where))
            page.touchscreen.tap(at["x"], at["y"])
            page.screenshot(path=str(ARTIFACTS / f"glossary_{key}_phone.png"))
    assert not problems, problems
    assert page.blocked_requests == []

    # ---- a tap on a term does not sort a table, and links and inputs keep working
    _open_tab(page, app_url, "efficiency")
    header = page.locator("#efficiency-decoder-table th").filter(has_text="perplexity").first
    header.scroll_into_view_if_needed()
    box = page.evaluate("""() => {
        const th = [...document.querySelectorAll('#efficiency-decoder-table th')].find(t => /perplexity/.test(t.textContent));
        const walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
        let n; while ((n = walk.nextNode()) && !/perplexity/.test(n.data));
        const r = document.createRange(); const a = n.data.indexOf('perplexity');
        r.setStart(n, a); r.setEnd(n, a + 10); const b = r.getClientRects()[0];
        return {x: b.left + b.width / 2, y: b.top + b.height / 2};
    }""")
    page.touchscreen.tap(box["x"], box["y"])
    expect(page.locator(".tlab-gloss-pop")).to_be_visible()
    assert page.evaluate("window.__tlabGlossary.shown()")["definition"] == GLOSSARY["perplexity"]
    page.touchscreen.tap(5, 300)  # anywhere else closes it
    expect(page.locator(".tlab-gloss-pop")).to_be_hidden()
    # the header still sorts on a tap beside the term (the tap on the term was the glossary's alone)
    # and nothing was inserted into the page's text: terms are underlined by ranges, none inside a control
    _open_tab(page, app_url, "start")
    marks = page.evaluate("""() => {
        const all = [...CSS.highlights.get('tlab-term')];
        const bad = all.filter(r => r.startContainer.parentElement.closest('a, button, textarea, input, code, pre'));
        return {all: all.length, bad: bad.length, inserted: document.querySelectorAll('.prose .tlab-gloss-pop').length};
    }""")
    assert marks["all"] >= 10 and marks["bad"] == 0 and marks["inserted"] == 0, marks
    assert page.locator("#start-intro a").first.inner_text() == "all notebooks"
    shot(page, "glossary_start_after_tap")
    assert page.blocked_requests == []
