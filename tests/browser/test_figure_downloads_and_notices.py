"""Figures and layout across tabs, as a visitor sees them on the whole page: tab headings are one size and
no two JSON accordions are stacked (on a phone, tables and plots: test_phone_tables_and_plots). The helpers
(PLOTS, OVERLAPS, _download) serve the tabs' own pages, which check that every plot downloads as PNG
and SVG from a visible control (no network), every main figure says what to notice (and the line is
true for the figure), titles do not run into axes or each other, and the Train tab's link restores its
settings without training (test_pipelines_figure_download, test_anatomy_figure_notices, test_train_link;
the Decoding inspector, picker and presets: test_decoding_picker_and_inspector)."""

from __future__ import annotations



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
