"""Issue #24's remaining course items, as a visitor sees them: every plot downloads as PNG and SVG
from a visible control (no network), every main figure says what to notice (and the line is true
for the figure), titles do not run into axes or each other, the Train tab's link restores its settings without training, tab headings are
one size, and no two JSON accordions are stacked. (The Decoding inspector, picker and presets are
checked on the Decoding tab's own page: tests/browser/test_decoding_picker_and_inspector.py.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot
from tests.conftest import ARTIFACTS, new_page

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


def test_a_plot_downloads_as_png_and_svg_offline_and_says_what_to_notice(page, app_url):
    page.goto(app_url + "?tab=pipelines-classify&text=I+loved+this+film%2C+every+minute+of+it.")
    note = page.locator("#pl-classify-plot .tlab-notice")
    expect(note).to_contain_text("What to notice:", timeout=120_000)
    (plot_id, shown, carried, buttons), = page.evaluate(PLOTS, "#pl-classify-plot")
    assert plot_id == "pl-classify-plot" and buttons == 2
    assert shown == "What to notice: " + carried
    # the line is true for the figure: its winner and score are the longest bar's
    bars = page.evaluate("""() => { const d = document.querySelector('#pl-classify-plot .js-plotly-plot').data[0];
        const i = d.x.indexOf(Math.max(...d.x)); return [d.y[i], d.x[i]]; }""")
    assert f"'{bars[0]}' wins with {bars[1]:.2f}" in shown, (bars, shown)
    png = _download(page, "pl-classify-plot", "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000
    svg = _download(page, "pl-classify-plot", "svg")
    assert svg.lstrip()[:4] == b"<svg" and b"wins" not in svg  # the figure itself, not the page
    assert page.blocked_requests == []
    shot(page, "course_polish_classify_notice")


def test_every_anatomy_figure_has_its_line_and_no_title_overlaps(page, app_url):
    page.goto(app_url + "?tab=anatomy&text=The+cat+sat+on+the+mat+because+it+was&role=decoder")
    expect(page.locator("#anatomy-diffs .tlab-notice")).to_contain_text("hidden states", timeout=180_000)
    for tab in ("Layer by layer", "Residual stream", "Masked attention", "Logit lens", "Parameter budget"):
        page.locator("#anatomy-tab").get_by_role("tab", name=tab, exact=True).click()
        page.wait_for_timeout(800)
        plots = page.evaluate(PLOTS, "#anatomy-tab")
        assert plots, tab
        for plot_id, shown, carried, buttons in plots:
            assert buttons == 2 and carried and shown == "What to notice: " + carried, (plot_id, shown)
        assert page.evaluate(OVERLAPS, "#anatomy-tab") == []
    shot(page, "course_polish_anatomy_notices")


def test_a_train_link_restores_the_settings_without_training(page, app_url):
    page.goto(app_url + "?tab=train&dataset=sentiment&methods=probe%2Czero_shot&epochs=5&seed=3"
              "&learning_curve=0&dataset_file=/etc/passwd")
    expect(page.locator("#train-dataset input[value=sentiment]")).to_be_checked(timeout=60_000)
    page.locator("#train-tab").get_by_text("Fine-tuning budget").click()  # a closed accordion draws nothing
    expect(page.locator("#train-epochs input[type=number]")).to_have_value("5")
    methods = page.locator("#train-methods")
    expect(methods.get_by_label("zero-shot (similarity)")).to_be_checked()
    expect(methods.get_by_label("features + logistic regression")).to_be_checked()
    expect(methods.get_by_label("fine-tuning")).not_to_be_checked()
    expect(page.locator("#train-link-note")).to_contain_text("does not train")
    page.wait_for_timeout(2_000)
    assert page.locator("#train-confusion .js-plotly-plot").count() == 0  # nothing ran on open
    expect(page.locator("#train-status")).not_to_contain_text(re.compile("[Tt]rain"))

    page.locator("#train-go").click()  # zero-shot + features: seconds, no fine-tuning
    plot = page.locator("#train-confusion")
    expect(plot.locator(".tlab-notice")).to_contain_text("most accurate", timeout=240_000)
    page.wait_for_function("location.search.includes('tab=train') && location.search.includes('methods=')")
    link = page.evaluate("location.search")
    assert "methods=zero_shot%2Cprobe" in link and "dataset=sentiment" in link and "epochs=5" in link, link
    assert page.evaluate(OVERLAPS, "#train-tab") == []  # "acc 0.67atures + logistic..." no more
    shot(page, "course_polish_train_link")


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


def test_tables_keep_whole_words_and_plots_fit_on_a_phone(browser, app_url):
    from tests.browser.test_decoding_phone_table import CRUSHED

    page = new_page(browser, viewport={"width": 420, "height": 900})
    try:
        page.goto(app_url + "?tab=tokenizers&text=Tokenizers+split+unbelievably+long+words")
        expect(page.locator("#tok-notice")).to_contain_text("What to notice", timeout=120_000)
        page.wait_for_timeout(800)
        for table in ("tok-enc-table", "tok-dec-table"):
            assert page.evaluate(CRUSHED, table) == [], table
        shot(page, "course_polish_phone_tokenizers")
        page.goto(app_url + "?tab=pipelines-classify&text=The+battery+died+after+two+days.")
        expect(page.locator("#pl-classify-plot .tlab-notice")).to_contain_text("wins", timeout=120_000)
        page.wait_for_timeout(800)
        table_id = page.evaluate("""() => { const t = [...document.querySelectorAll('[id^=pl-classify] .table-wrap')]
            .find(t => t.offsetParent !== null); return t ? t.closest('[id]').id : null; }""")
        assert table_id, "no Classify table"
        assert page.evaluate(CRUSHED, table_id) == []  # "NEGAT..." no more
        width = page.evaluate("document.querySelector('#pl-classify-plot .js-plotly-plot').getBoundingClientRect().right")
        assert width <= 420, width
        assert page.evaluate("document.documentElement.scrollWidth") <= 420
        shot(page, "course_polish_phone_classify")
        assert page.blocked_requests == []
    finally:
        page.context.close()
