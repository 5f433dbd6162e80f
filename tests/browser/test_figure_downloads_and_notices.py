"""Figures and layout across tabs, as a visitor sees them on the whole page: tab headings are one size and
no two JSON accordions are stacked (on a phone, tables and plots: test_phone_tables_and_plots). The helpers
(PLOTS, OVERLAPS, _download) serve the tabs' own pages, which check that every plot downloads as PNG
and SVG from a visible control (no network), every main figure says what to notice (and the line is
true for the figure), titles do not run into axes or each other, and the Train tab's link restores its
settings without training (test_pipelines_figure_download, test_anatomy_figure_notices, test_train_link;
the Decoding inspector, picker and presets: test_decoding_picker_and_inspector)."""

from __future__ import annotations

from tests.conftest import ARTIFACTS

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


def _download(page, plot_id: str, fmt: str) -> bytes:
    with page.expect_download() as info:
        page.locator(f"#{plot_id} button.tlab-fig-save[data-format={fmt}]").click()
    download = info.value
    assert download.suggested_filename == f"{plot_id}.{fmt}"
    path = ARTIFACTS / f"course_figure_{plot_id}.{fmt}"
    download.save_as(str(path))
    return path.read_bytes()


def test_tab_headings_are_one_size_and_json_accordions_are_never_stacked(page, app_url):
    page.goto(app_url)
    sizes, stacked = {}, {}
    for tab in ("Pipelines", "Train", "Tokenizers", "Anatomy", "Attention", "Decoding", "Efficiency",
                "Interventions", "Semantic search", "From scratch"):
        page.get_by_role("tab", name=tab, exact=True).first.click()
        page.wait_for_timeout(600)
        sizes[tab] = page.evaluate("""() => [...document.querySelectorAll('#main-tabs .prose h1, #main-tabs .prose h2, #main-tabs .prose h3')]
            .filter(h => h.offsetParent !== null).map(h => getComputedStyle(h).fontSize)""")
        stacked[tab] = page.evaluate("""() => { const b = [...document.querySelectorAll('#main-tabs button.label-wrap')]
            .filter(e => e.offsetParent !== null && /JSON/.test(e.innerText)).map(e => e.getBoundingClientRect());
            return b.slice(1).filter((r, i) => r.top - b[i].bottom < 30 && Math.abs(r.left - b[i].left) < 5).length; }""")
    assert len({s for found in sizes.values() for s in found}) == 1, sizes
    assert not any(stacked.values()), stacked
