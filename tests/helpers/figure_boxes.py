"""Measuring a drawn Plotly figure: the boxes of its title, legend, axis titles and tick labels, and which
of them overlap or stick out of the figure (the phone checks: no overlap at 390 px, not judged by eye)."""

from __future__ import annotations

BOXES_JS = """(sel) => {
    const div = document.querySelector(sel + ' .js-plotly-plot');
    if (!div) return null;
    const svg = div.querySelector('svg.main-svg').getBoundingClientRect();
    const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const seen = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0
        && getComputedStyle(e).visibility !== 'hidden' && getComputedStyle(e).display !== 'none'; };
    const all = (q) => [...div.querySelectorAll(q)].filter(seen);
    const out = {figure: [svg.left, svg.top, svg.right, svg.bottom], parts: []};
    for (const e of all('.g-gtitle .gtitle')) out.parts.push(['title', e.textContent, box(e)]);
    for (const e of all('.legend .bg')) out.parts.push(['legend', 'legend', box(e)]);
    for (const [q, kind] of [['.g-xtitle text', 'axis-title'], ['.g-ytitle text', 'axis-title'],
                             ['.g-y2title text', 'axis-title'], ['.xtick text', 'xtick'], ['.ytick text', 'ytick'],
                             ['.y2tick text', 'y2tick'], ['.textpoint text', 'label'], ['.annotation-text', 'note']])
        for (const e of all(q)) out.parts.push([kind, e.textContent, box(e)]);
    return out;
}"""


def _overlap(a, b, slack: float = 1.0) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def figure_problems(page, selector: str) -> list[str]:
    """What is wrong with the figure under `selector` as drawn: two of its title, legend, axis titles and tick
    labels overlapping (tick labels of one axis with each other too), or one sticking out of the figure."""
    got = page.evaluate(BOXES_JS, selector)
    assert got is not None, f"no figure drawn under {selector}"
    fx0, fy0, fx1, fy1 = got["figure"]
    parts = got["parts"]
    out = []
    for kind, text, b in parts:
        if b[0] < fx0 - 1 or b[1] < fy0 - 1 or b[2] > fx1 + 1 or b[3] > fy1 + 1:
            out.append(f"{kind} {text!r} sticks out of the figure: {[round(v) for v in b]} vs "
                       f"{[round(v) for v in got['figure']]}")
    for i, (k1, t1, b1) in enumerate(parts):
        for k2, t2, b2 in parts[i + 1:]:
            if _overlap(b1, b2):
                out.append(f"{k1} {t1!r} overlaps {k2} {t2!r}")
    return out
