"""The figures the phone check found crowded, drawn at 390 px (a phone) and 1400 px, measured in the browser:
no two of a figure's title, legend, axis titles, tick labels and marker labels overlap, and none sticks out of
the figure (the chapter 8 scatter had its title over its legend, labels piled, the legend cut, and an accuracy
axis from -100 to 200). The figures are built by the tabs' own plot functions from fixed plain results."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import new_page, shot, until
from tests.helpers.figure_boxes import compress_rows, figure_problems
from tests.helpers.tab_app import served_tab


def curve(sparsities) -> list[dict]:
    return [{"sparsity": s, "accuracy": 0.863 - 0.7 * s, "latency_ms_mean": 5.1, "size_mb": 36.2,
             "compressed_mb": 33.4 * (1 - 0.6 * s)} for s in (0.0, *sparsities)]


EVALUATION = {"questions": 36, "passages": 120, "reader_on_gold": {"f1": 27.2, "exact": 19.4},
              "recall": [{"k": k, "recall": r} for k, r in ((1, 0.81), (3, 0.94), (5, 0.97))],
              "end_to_end": [{"k": k, "f1": f, "exact": e} for k, f, e in ((1, 20.7, 13.9), (3, 21.9, 13.9),
                                                                              (5, 22.4, 16.7))]}
DECODER = {"rows": [{"name": "SmolLM2-135M fp32", "precision": "fp32", "tokens_per_s": 15.4, "perplexity": 9.81,
                     "memory_mb": 538.0, "disk_mb": 538.0},
                    {"name": "SmolLM2-135M int8", "precision": "int8", "tokens_per_s": 26.6, "perplexity": 10.02,
                     "memory_mb": 250.0, "disk_mb": 250.0}]}
ENCODER = {"rows": [{"name": "MiniLM fp32", "precision": "fp32", "ms_per_text": 9.1, "agreement": 1.0,
                     "memory_mb": 87.0, "disk_mb": 87.0},
                    {"name": "MiniLM int8", "precision": "int8", "ms_per_text": 6.2, "agreement": 0.95,
                     "memory_mb": 33.0, "disk_mb": 33.0}]}
FIGURES = ("compress-scatter", "compress-pruning", "compress-pruning-one", "efficiency-decoder", "efficiency-encoder",
           "search-evaluation", "why-agreement")
METHODS = ["gradient_x_input", "integrated_gradients", "occlusion", "attention_rollout", "last_layer_attention"]
AGREEMENT = {"checks": {"agreement": {
    "methods": METHODS, "top_k": 3,
    "spearman": [[1.0 if i == j else round(((i * 7 + j * 3) % 11 - 5) / 5.5, 2) for j in range(5)] for i in range(5)],
    "top_k_overlap": [[1.0 if i == j else (1, 2, 3)[(i + j) % 3] / 3 for j in range(5)] for i in range(5)]}}}
CELL_TEXT_JS = """() => {
    const d = document.querySelector('#why-agreement .js-plotly-plot');
    const cell = d._fullLayout._size.w / 5;
    return [...d.querySelectorAll('.hm text')].map(t => [t.textContent, t.getBoundingClientRect().width, cell,
                                                        parseFloat(getComputedStyle(t).fontSize)]);
}"""


@pytest.fixture(scope="module")
def figures_url():
    import gradio as gr

    from backend.efficiency.compress import claims
    from components.efficiency import compress_plots, plots
    from components.search import evaluate
    from components.shell import figure_tools
    from components.why import plots as why

    rows = compress_rows()
    made = {"compress-scatter": compress_plots.scatter(rows, claims.fastest(rows)),
            "compress-pruning": compress_plots.pruning(curve((0.3, 0.5, 0.7, 0.9))),
            "compress-pruning-one": compress_plots.pruning(curve((0.5,))),  # a custom run: one sparsity
            "efficiency-decoder": plots.decoder_scatter(DECODER), "efficiency-encoder": plots.encoder_scatter(ENCODER),
            "search-evaluation": evaluate.evaluation_figure(EVALUATION),
            "why-agreement": why.agreement_figure(AGREEMENT)}

    def build():
        figure_tools()  # the page's figure script and styles, as app.py places them
        for key in FIGURES:
            gr.Plot(made[key], elem_id=key)

    with served_tab(build, themed=True) as url:
        yield url


@pytest.mark.parametrize("width", [390, 1400])
def test_no_figure_has_parts_overlapping_or_cut_at_this_width(browser, figures_url, width):
    page = new_page(browser, viewport={"width": width, "height": 900})
    try:
        page.goto(figures_url)
        for key in FIGURES:
            expect(page.locator(f"#{key} .js-plotly-plot .main-svg").first).to_be_visible(timeout=60_000)
        # figures.js wraps titles and grows squeezed plots after the first draw: read until it has
        problems = until(page, lambda: {key: figure_problems(page, f"#{key}") for key in FIGURES},
                         lambda found: not any(found.values()))
        shot(page, f"figure_layout_{width}")
        assert {k: v for k, v in problems.items() if v} == {}
        # a plot keeps room to be read: the scatter's plot area is at least 200 px tall even under 9 legend rows
        plot_h = page.evaluate("() => document.querySelector('#compress-scatter .js-plotly-plot')._fullLayout._size.h")
        assert plot_h >= 200, plot_h
        # the accuracy axis stays within 0-100 %, around the values
        y = page.evaluate("() => document.querySelector('#compress-scatter .js-plotly-plot')._fullLayout.yaxis.range")
        assert 0 <= y[0] < 22.1 and 86.3 < y[1] <= 100, y
        x = page.evaluate("() => document.querySelector('#compress-pruning-one .js-plotly-plot')._fullLayout.xaxis.range")
        assert -15 < x[0] < 0 and x[1] <= 100, x  # one sparsity: not an axis from -20 to 80
    finally:
        page.context.close()


@pytest.mark.parametrize("width", [390, 1400])
def test_the_agreement_heatmaps_numbers_fit_their_cells_at_a_readable_size(browser, figures_url, width):
    """Why's agreement matrix: each cell's numbers (Spearman, then top-k overlap) fit inside the cell at 9 px or
    more (on a phone Plotly shrank "0.69 top-3 67%" to 3 px to fit a 21-px cell)."""
    page = new_page(browser, viewport={"width": width, "height": 900})
    try:
        page.goto(figures_url)
        expect(page.locator("#why-agreement .hm text").first).to_be_attached(timeout=60_000)
        page.wait_for_timeout(500)
        cells = page.evaluate(CELL_TEXT_JS)
        assert len(cells) == 25
        assert [c for c in cells if c[1] > c[2] - 2 or c[3] < 9] == [], cells[:5]
    finally:
        page.context.close()
