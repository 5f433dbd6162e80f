"""Measuring a drawn Plotly figure: the boxes of its title, legend, axis titles and tick labels, and which
of them overlap or stick out of the figure (the phone checks: no overlap at 390 px, not judged by eye)."""

from __future__ import annotations

from tests.helpers.app import ARTIFACTS


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


# Visible plots under `scope`: (elem id of its block, the notice shown, the notice the figure carries,
# how many download buttons).
PLOTS = """(scope) => [...document.querySelectorAll(scope + ' .js-plotly-plot')].filter(p => p.offsetParent !== null)
  .map(p => { const bar = p.parentElement.querySelector(':scope > .tlab-fig-bar');
    const note = bar ? bar.querySelector('.tlab-notice') : null;
    return [p.parentElement.closest('[id]').id, note && !note.hidden ? note.innerText : '',
            (p.layout && p.layout.meta && p.layout.meta.notice) || '', bar ? bar.querySelectorAll('button.tlab-fig-save').length : 0]; })"""


# Text in a plot that overlaps its title: (plot id, what overlaps). Titles against axis titles, tick
# labels (a top axis), the legend and Gradio's label chip; subplot titles (annotations) against each other.
OVERLAPS = """(scope) => {
  const out = [];
  const hit = (a, b) => a.width && b.width && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const p of document.querySelectorAll(scope + ' .js-plotly-plot')) {
    if (p.offsetParent === null) continue;
    const id = p.parentElement.closest('[id]').id;
    const title = p.querySelector('.gtitle');
    const others = [...p.querySelectorAll('.xtitle, .ytitle, .legend, .xtick text'),
                    ...p.parentElement.querySelectorAll(':scope > label.block-label')];  // Gradio's label chip
    if (title) for (const o of others) if (hit(title.getBoundingClientRect(), o.getBoundingClientRect()))
      out.push([id, 'title', (o.textContent || String(o.className)).slice(0, 30)]);
    const notes = [...p.querySelectorAll('.annotation-text')].map(a => [a.textContent, a.getBoundingClientRect()]);
    for (let i = 0; i < notes.length; i++) for (let j = i + 1; j < notes.length; j++)
      if (hit(notes[i][1], notes[j][1])) out.push([id, notes[i][0].slice(0, 30), notes[j][0].slice(0, 30)]);
  }
  return out;
}"""


def download_figure(page, plot_id: str, fmt: str) -> bytes:
    with page.expect_download() as info:
        page.locator(f"#{plot_id} button.tlab-fig-save[data-format={fmt}]").click()
    download = info.value
    assert download.suggested_filename == f"{plot_id}.{fmt}"
    path = ARTIFACTS / f"course_figure_{plot_id}.{fmt}"
    download.save_as(str(path))
    return path.read_bytes()


def compress_rows() -> list[dict]:
    from backend.efficiency.compress import report

    raw = {"rows": [{"name": k, "accuracy": a, "latency_ms_mean": m, "latency_ms_std": s, "latency_runs": 100,
                     "size_mb": mb, "files": [], "predictions": [0] * 95} for k, a, m, s, mb in SPEC]}
    return report.rows(raw)


SPEC = [("teacher", 0.842, 11.2, 1.9, 86.7), ("student", 0.863, 5.1, 0.9, 36.2), ("student_int8", 0.853, 4.4, 0.8, 22.9),
        ("student_onnx", 0.863, 3.3, 0.5, 36.3), ("student_onnx_int8", 0.853, 2.9, 0.5, 9.4),
        ("pruned_30", 0.863, 5.2, 0.9, 36.2), ("pruned_50", 0.842, 5.1, 0.9, 36.2),
        ("pruned_70", 0.674, 5.2, 0.9, 36.2), ("pruned_90", 0.221, 5.1, 0.9, 36.2)]
