"""Decode by hand in headless Chromium: start from the prompt, take the 2nd candidate twice, and
see the path's log-prob next to greedy's, the two hand picks marked, and the path table agree
with /decode_by_hand for the same path."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import overflowing_tables, shot
from tests.helpers.decoding_page import open_tab, table

TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)

SCOPE = "#decoding-tab"


def take_second(page, n_rows: int):
    page.locator("#decoding-hand-pick input").click()
    page.get_by_role("option", name=re.compile(r"^2\. ")).first.click()
    page.locator("#decoding-hand-take").click()
    expect(page.locator("#decoding-hand-path [role=row][data-index]")).to_have_count(n_rows, timeout=120_000)


def test_take_the_second_candidate_twice(page, tab_url):
    from gradio_client import Client

    open_tab(page, tab_url)
    page.locator("#decoding-hand").get_by_text("Decode by hand", exact=False).first.click()
    page.locator("#decoding-hand-start").click()
    summary = page.locator("#decoding-hand-summary")
    expect(summary).to_contain_text("No token chosen yet", timeout=180_000)
    _, cands = table(page, "decoding-hand-candidates")
    assert len(cands) == 10 and cands[0][0] == "1"

    take_second(page, 1)
    take_second(page, 2)
    expect(summary).to_contain_text("path log-prob")
    expect(summary).to_contain_text("greedy's")
    expect(summary).to_contain_text("2 chosen by hand")
    headers, rows = table(page, "decoding-hand-path")
    assert headers[:3] == ["#", "token", "chosen by"]
    assert [r[2] for r in rows] == ["hand", "hand"] and [r[5] for r in rows] == ["2", "2"]
    marked = page.locator("#decoding-hand-html .tl-hand")
    expect(marked).to_have_count(2)

    # the numbers on screen are the API's for the same path
    prompt = page.locator("#decoding-prompt textarea").input_value()
    path = [int(x) for x in page.locator("#decoding-hand-html [data-step]").evaluate_all(
        "els => els.map(e => e.dataset.step)")]
    assert path == [1, 2]
    data = Client(tab_url, verbose=False).predict(prompt, [], 10, "step", api_name="/decode_by_hand")
    second = data["candidates"][1]
    assert rows[0][1].replace("␣", " ") == second["token"]
    text = summary.inner_text()
    logp = float(re.search(r"path log-prob (-?\d+\.\d+)", text).group(1))
    again = Client(tab_url, verbose=False).predict(prompt, [second["token_id"], _second_after(tab_url, prompt, second)],
                                                   10, "step", api_name="/decode_by_hand")
    assert logp == round(again["path_logprob"], 3)
    assert f"greedy's {again['greedy']['logprob']:.3f}" in text
    assert overflowing_tables(page, SCOPE) == []
    page.locator("#decoding-hand").scroll_into_view_if_needed()
    shot(page, "decoding_by_hand")

    # attention while generating, for the same two hand-picked tokens
    page.locator("#decoding-growth").get_by_text("Attention while generating", exact=False).first.click()
    page.locator("#decoding-growth-path").click()
    line = page.locator("#decoding-growth-line")
    expect(line).to_contain_text("2 rows", timeout=120_000)
    expect(line).to_contain_text("your path")
    plot = page.locator("#decoding-growth-plot")
    expect(plot.locator(".js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(plot).to_contain_text("Attention while generating")
    expect(plot).to_contain_text(rows[1][1][:4])  # the 2nd picked token labels a row
    page.locator("#decoding-growth").scroll_into_view_if_needed()
    shot(page, "decoding_attention_growth")
    assert not getattr(page, "blocked_requests", [])


def _second_after(tab_url, prompt, first) -> int:
    from gradio_client import Client

    data = Client(tab_url, verbose=False).predict(prompt, [first["token_id"]], 10, "step", api_name="/decode_by_hand")
    return data["candidates"][1]["token_id"]
