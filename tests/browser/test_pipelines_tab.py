"""Pipelines tab in headless Chromium: each sub-tab runs its first example and shows a result.

A result is visible when the badge names the checkpoint and method; the task's own output
(plot, highlight, text) is checked too, with the ux rules: the raw JSON collapsed, no result
table wider than its box at 1400 px, a fallback badge at the top of a fallback's result, no
stale result after an error, and text generation that streams and stops.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from backend.runtime import config
from tests.helpers.browser import open_raw_json, overflowing_tables, press_again, shot
from tests.helpers.pipelines_page import open_subtab

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)

# sub-tab name, task id, first example's label, what must show after the run
SUBTABS = [
    ("Text classification", "classify", "The complaint letter", "#pl-classify-plot .js-plotly-plot"),
    ("Zero-shot", "zero_shot", "The complaint letter", "#pl-zero_shot-plot .js-plotly-plot"),
    ("Named entities", "ner", "Tim Cook at Apple", "#pl-ner-highlight"),
    ("Question answering", "qa", "When was the Eiffel Tower built?", "#pl-qa-answer h3"),
    ("Summarization", "summarize", "The wrong parcel (short)", "#pl-summarize-plot .js-plotly-plot"),
    ("Translation", "translate", "The letter's first sentence", "#pl-translate-pair strong"),
    ("Text generation", "generate_text", "Reply to the letter", "#pl-generate_text-output textarea"),
    ("Fill-mask", "fill_mask", "Paris is the [MASK] of France.", "#pl-fill_mask-plot .js-plotly-plot"),
]
FALLBACKS = {"summarize", "translate"}  # qa: the reader fine-tuned here


def tokens_so_far(counter) -> int:
    found = re.search(r"(\d+) / \d+ new tokens", counter.inner_text())
    return int(found.group(1)) if found else 0


def set_number(page, elem_id, value):
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


@pytest.mark.parametrize("tab,task,example,result", SUBTABS, ids=[s[1] for s in SUBTABS])
def test_subtab_runs_first_example(page, tab_url, tab, task, example, result):
    open_subtab(page, tab_url, tab)
    run = page.locator(f"#pl-{task}-run")
    expect(run).to_be_visible(timeout=10_000)
    page.get_by_role("button", name=example, exact=True).first.click()
    run.click()
    badge = page.locator(f"#pl-{task}-badge")
    expect(badge).to_contain_text("method", timeout=180_000)
    expect(badge).to_contain_text(re.compile(r"MiniLM|SmolLM2|classifier|trained"))
    expect(page.locator(result).first).to_be_visible(timeout=30_000)
    if task == "generate_text":
        expect(page.locator(result)).to_have_value(re.compile(r"Customer service response"))
    if task in FALLBACKS:  # said first, before the result
        expect(badge).to_contain_text("fallback: small chat model, English")
        assert badge.inner_text().lstrip().startswith("fallback: small chat model, English")
    if task == "ner":  # the model fine-tuned here, its test score named, real scores per entity
        expect(badge).to_contain_text(config.method_name(config.METHOD_FINETUNED))
        expect(badge).to_contain_text("test entity F1")
        expect(page.locator("#pl-ner-highlight")).to_contain_text("Tim Cook")
        table = page.locator("#pl-ner-table")
        expect(table).to_contain_text("PER")
        expect(table).to_contain_text("ORG")
        scores = page.evaluate("""() => [...document.querySelectorAll('#pl-ner-table tbody td')]
                                        .map(e => e.textContent.trim()).filter(t => /^0?\\.\\d+$|^1(\\.0+)?$/.test(t))""")
        assert scores and all(0 < float(x) <= 1 for x in scores), scores
    if task == "fill_mask":
        # how it was served, in the words of its one source (config.METHOD_WORDS)
        expect(badge).to_contain_text(f"{config.method_name(config.METHOD_DECODER_MASK)}: "
                                      f"{config.method_text(config.METHOD_DECODER_MASK)}")
        expect(page.locator("#pl-fill_mask-table")).to_contain_text("capital")
    if task == "qa":  # the Top-n slider says what span decoding does with it
        expect(page.get_by_text("may only copy spans and may say the text has no answer")).to_be_visible()
        headers = page.evaluate("""() => [...document.querySelectorAll('#pl-qa-table th')]
                                           .map(e => e.textContent.trim()).filter(t => t)""")
        # The rows as the page shows them (Gradio 6's tbody also holds cells of its virtual scroller).
        rows = page.locator("#pl-qa-table").get_by_role("row").all_inner_texts()
        cells = [c.strip() for c in rows[1].split("\n") if c.strip()]
        headers = [h.replace("⋮", "").strip() for h in headers]  # the column menu's glyph
        answer = page.locator("#pl-qa-answer h3").inner_text().strip()
        assert headers[:3] == ["#", "score", "answer"], headers
        assert cells[:3] == ["1", cells[1], answer] and float(cells[1]) > 0, cells
    assert open_raw_json(page, "body") == 0  # the raw JSON stays collapsed
    assert overflowing_tables(page, "body") == []  # 1400 px: no result table scrolls sideways
    shot(page, f"pipelines_{task}")
    assert not page.blocked_requests, page.blocked_requests


def test_error_clears_the_old_result(page, tab_url):
    """A good fill-mask, then one with no mask: the old result is gone, one inline message shows."""
    open_subtab(page, tab_url, "Fill-mask")
    page.locator("#pl-fill_mask-run").click()
    badge = page.locator("#pl-fill_mask-badge")
    expect(badge).to_contain_text("decoder fill-mask", timeout=180_000)
    expect(page.locator("#pl-fill_mask-plot .js-plotly-plot")).to_be_visible(timeout=30_000)  # a loaded box draws late
    page.locator("#pl-fill_mask-text textarea").fill("No mask in this sentence.")
    press_again(page, "#pl-fill_mask-run")
    box = page.locator("#pl-fill_mask-error")
    expect(box).to_contain_text("no [MASK]", timeout=60_000)
    expect(badge).not_to_contain_text("decoder fill-mask")
    expect(page.locator("#pl-fill_mask-plot .js-plotly-plot")).to_have_count(0)
    expect(page.locator("#pl-fill_mask-table")).not_to_contain_text("capital")
    shot(page, "pipelines_fill_mask_error")
    # and the next good run hides the message again
    page.locator("#pl-fill_mask-text textarea").fill("The cat sat on the [MASK].")
    press_again(page, "#pl-fill_mask-run")
    expect(badge).to_contain_text("decoder fill-mask", timeout=180_000)
    expect(box).to_be_hidden()


def test_text_generation_streams_and_stop_stops_it(page, tab_url):
    open_subtab(page, tab_url, "Text generation")
    set_number(page, "pl-generate_text-max", 256)
    output = page.locator("#pl-generate_text-output textarea")
    counter = page.locator("#pl-generate_text-counter")
    page.locator("#pl-generate_text-run").click()
    expect(counter).to_contain_text(re.compile(r"[1-9]\d* / 256 new tokens…"), timeout=180_000)
    first, n1 = len(output.input_value()), tokens_so_far(counter)
    deadline = time.monotonic() + 120
    while tokens_so_far(counter) < n1 + 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    grown = len(output.input_value())
    assert grown > first, "the text did not grow while generating"
    assert "tokens/s" not in counter.inner_text()  # still running: the final line is not there yet
    shot(page, "pipelines_generate_text_streaming")
    page.locator("#pl-generate_text-stop").click()
    expect(counter).to_contain_text("stopped by you", timeout=10_000)
    time.sleep(1.0)  # a token or two may be in flight
    stopped = output.input_value()
    time.sleep(4.0)
    assert output.input_value() == stopped, "generation went on after Stop"
    n = int(re.search(r"(\d+) / 256", counter.inner_text()).group(1))
    assert n < 256 and stopped.startswith(page.locator("#pl-generate_text-output textarea").input_value()[:20])
    assert page.locator("#pl-generate_text-error").is_hidden()  # a Stop is not an error


def test_text_generation_error_is_inline_and_clears_the_old_text(page, tab_url):
    open_subtab(page, tab_url, "Text generation")
    set_number(page, "pl-generate_text-max", 3)
    output = page.locator("#pl-generate_text-output textarea")
    page.locator("#pl-generate_text-run").click()
    expect(page.locator("#pl-generate_text-counter")).to_contain_text("tokens/s", timeout=180_000)
    assert output.input_value()
    page.get_by_label("Prompt").fill("   ")
    press_again(page, "#pl-generate_text-run")
    expect(page.locator("#pl-generate_text-error")).to_contain_text("prompt is empty", timeout=60_000)
    expect(output).to_have_value("")
    expect(page.locator("#pl-generate_text-badge")).not_to_contain_text("method")
    shot(page, "pipelines_generate_text_error")
    shot(page, "pipelines_generate_text_stopped")
