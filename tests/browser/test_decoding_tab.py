"""Decoding tab in headless Chromium: greedy and beam runs show text, step table and plots; the
top-p chart says the user's own setting; tables fit at 1400 px; int8 shows both columns; an
error blanks the old result and shows one inline message."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import open_raw_json, overflowing_tables, shot
from tests.helpers.decoding_page import open_tab, pick_strategy, run_and_wait, set_number, table

TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)

SCOPE = "#decoding-tab"


def pick_preset(page, name):
    page.locator("#decoding-preset input").click()
    page.get_by_role("option", name=name).click()


def chart_title(page, elem_id) -> str:
    return page.locator(f"#{elem_id} .gtitle").first.text_content()


def overlapping_labels(page, elem_id) -> list[str]:
    """Pairs of text labels drawn on a plotly chart whose boxes intersect."""
    return page.evaluate(
        """(id) => {
            const boxes = [...document.querySelectorAll(`#${id} .textpoint text`)]
                .filter(t => t.textContent.trim()).map(t => [t.textContent, t.getBoundingClientRect()]);
            const out = [];
            for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
                const [a, ra] = boxes[i], [b, rb] = boxes[j];
                if (ra.left < rb.right - 1 && rb.left < ra.right - 1 && ra.top < rb.bottom - 1 && rb.top < ra.bottom - 1)
                    out.push(`${a} / ${b}`);
            }
            return out;
        }""",
        elem_id,
    )


def test_greedy_then_beam_show_text_table_and_plots(page, tab_url):
    open_tab(page, tab_url)
    pick_preset(page, "Transformers are the… (greedy, 8 steps)")
    expect(page.locator("#decoding-prompt textarea")).to_have_value("Transformers are the")
    page.locator("#decoding-run").click()

    stats = page.locator("#decoding-stats")
    expect(stats).to_contain_text("sequence log-prob", timeout=120_000)
    expect(stats).to_contain_text("greedy")
    text = page.locator("#decoding-text textarea")
    assert text.input_value().strip()
    steps = page.locator("#decoding-steps")
    expect(steps).to_contain_text("top candidates")
    expect(steps).to_contain_text("␣")  # chosen tokens and candidates, spaces shown as ␣
    assert steps.locator("tbody tr").count() >= 1
    expect(page.locator("#decoding-temp-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#decoding-cum-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#decoding-temp-plot")).to_contain_text("T = 0.5")
    expect(page.locator("#decoding-cum-plot")).to_contain_text("top_p = off (greedy search")
    expect(page.locator("#decoding-badge")).to_contain_text("SmolLM2")
    assert overflowing_tables(page, SCOPE) == []
    assert open_raw_json(page, SCOPE) == 0
    shot(page, "decoding_greedy")

    pick_strategy(page, "beam")
    run_and_wait(page, "beam 4")
    tree = page.locator("#decoding-tree-plot")
    expect(tree.locator(".js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(tree).to_contain_text("kept (a running beam)")
    expect(tree).to_contain_text("pruned")
    expect(tree).to_contain_text("best output")
    expect(page.locator("#decoding-cum-plot")).to_contain_text("top_p = off (beam search")
    assert tree.locator(".textpoint text").count() >= 3  # the best path is labelled
    assert overlapping_labels(page, "decoding-tree-plot") == []
    assert overflowing_tables(page, SCOPE) == []
    shot(page, "decoding_beam_tree")
    assert not getattr(page, "blocked_requests", [])


def test_top_p_chart_title_matches_the_setting_and_the_table(page, tab_url):
    open_tab(page, tab_url)
    pick_strategy(page, "sample")
    set_number(page, "decoding-max-new", 6)
    set_number(page, "decoding-top-p", 0.9)
    page.locator("#decoding-seed textarea, #decoding-seed input").first.fill("3")
    run_and_wait(page, "sample top-p 0.9")
    expect(page.locator("#decoding-cum-plot")).to_contain_text("top_p = 0.9")
    heads, rows = table(page, "decoding-steps")
    assert heads[:3] == ["#", "token", "p"] and "left" in heads and heads[-1] == "top candidates (p)"
    left = f'{int(rows[0][heads.index("left")].replace(",", "")):,}'
    title = chart_title(page, "decoding-cum-plot")
    assert title.startswith("top_p = 0.9 at T = 1") and f": {left} token(s) survive" in title, (title, left)
    assert overflowing_tables(page, SCOPE) == []
    assert open_raw_json(page, SCOPE) == 0
    shot(page, "decoding_top_p_0.9")

    set_number(page, "decoding-top-p", 1)
    run_and_wait(page, "sample")
    expect(page.locator("#decoding-cum-plot")).to_contain_text("top_p = off at T = 1: 49,152 tokens left",
                                                               timeout=30_000)
    heads, rows = table(page, "decoding-steps")
    assert rows[0][heads.index("left")].replace(",", "") == "49152"
    shot(page, "decoding_top_p_off")


def test_int8_shows_both_probabilities_and_compare_fits(page, tab_url):
    open_tab(page, tab_url)
    set_number(page, "decoding-max-new", 6)
    page.locator("#decoding-precision").get_by_text("int8", exact=True).click()
    run_and_wait(page, "greedy int8")
    expect(page.locator("#decoding-stats")).to_contain_text("re-scored the same tokens")
    heads, rows = table(page, "decoding-steps")
    assert heads[:4] == ["#", "token", "p int8", "p fp32"] and len(rows) >= 1
    assert all(re.fullmatch(r"\d\.\d{4}|\d\.\d\de-\d\d", r[2]) and r[3] for r in rows)
    assert overflowing_tables(page, SCOPE) == []
    shot(page, "decoding_int8")

    page.locator("#decoding-compare").get_by_text("Compare 2-4 strategies").click()
    page.locator("#decoding-strategies .cm-content").click()  # a short comparison: 6 tokens each
    page.keyboard.press("Control+A")
    page.keyboard.insert_text('[{"strategy": "greedy", "max_new_tokens": 6}, {"strategy": "beam", "num_beams": 2, '
                              '"max_new_tokens": 6}, {"strategy": "sample", "top_p": 0.9, "max_new_tokens": 6, '
                              '"seed": 1, "precision": "int8"}]')
    page.locator("#decoding-compare-run").click()
    cmp = page.locator("#decoding-compare-table")
    expect(page.locator("#decoding-compare-plot .js-plotly-plot")).to_be_visible(timeout=240_000)
    cmp.scroll_into_view_if_needed()
    expect(cmp).to_contain_text("sample top-p 0.9 int8")
    heads, _ = table(page, "decoding-compare-table")
    assert heads == ["strategy", "log-prob", "ppl", "dist-2", "dist-3", "tokens", "tok/s", "text"]
    assert overflowing_tables(page, SCOPE) == []
    assert open_raw_json(page, SCOPE) == 0
    shot(page, "decoding_compare")


def test_an_error_after_a_result_blanks_it_and_shows_one_message(page, tab_url):
    open_tab(page, tab_url)
    set_number(page, "decoding-max-new", 4)
    run_and_wait(page, "greedy")
    assert page.locator("#decoding-text textarea").input_value().strip()
    pick_strategy(page, "sample")
    set_number(page, "decoding-temperature", 0)
    page.locator("#decoding-run").click()
    box = page.locator("#decoding-error")
    expect(box).to_be_visible(timeout=60_000)
    expect(box).to_contain_text("temperature must be > 0")
    expect(box).to_contain_text("strategy; otherwise use e.g. 0.7")
    expect(page.locator("#decoding-text textarea")).to_have_value("")
    expect(page.locator("#decoding-stats")).not_to_contain_text("sequence log-prob")
    assert table(page, "decoding-steps")[1] == []
    assert "Traceback" not in page.content()
    shot(page, "decoding_bad_temperature")

    pick_strategy(page, "greedy")
    run_and_wait(page, "greedy")
    expect(box).to_be_hidden()
