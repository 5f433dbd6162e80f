"""Decoding tab, from the learner's side: after Stop the stats line is this run's (partial, its own
token count), never the previous run's; the knobs a strategy ignores are greyed out."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from components.decoding.handlers import running_line, stopped_line
from tests.helpers.browser import shot
from tests.helpers.decoding_page import open_tab, pick_strategy, run_and_wait, set_number, table

TAB = "decoding"  # its page holds this tab alone (tab_url, tests/conftest.py)

STREAMING = re.compile(r"▶ greedy · (\d+) / 200 new tokens so far")


def test_stopped_line_is_this_runs_partial_line():
    line = stopped_line(running_line("greedy", 12, 200))
    assert line.startswith("■ **greedy** · **stopped by you after 12 of 200 new tokens**: a partial run")
    assert "stopped by you before it finished" in stopped_line(running_line("beam 4"))
    assert "before the run started" in stopped_line(running_line())
    # A run that finished before Stop keeps its true stats.
    assert not isinstance(stopped_line("**greedy** · sequence log-prob -3.2 · reached max_new_tokens"), str)


def test_stop_shows_this_runs_partial_stats_not_the_previous_runs(page, tab_url):
    open_tab(page, tab_url)
    stats = page.locator("#decoding-stats")
    text = page.locator("#decoding-text textarea")
    set_number(page, "decoding-max-new", 24)
    run_and_wait(page, "greedy")
    first = stats.inner_text()
    assert re.search(r"\d+ tokens in [\d.]+ s", first), first
    first_text = text.input_value()

    page.locator("#decoding-prompt textarea").fill("The history of the lighthouse begins")
    set_number(page, "decoding-max-new", 200)
    page.locator("#decoding-run").click()
    expect(stats).to_contain_text(STREAMING, timeout=180_000)
    # The previous run's result went as soon as this one started.
    expect(stats).not_to_contain_text("sequence log-prob")
    assert table(page, "decoding-steps")[1] == []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = stats.inner_text()
        m = STREAMING.search(line)
        assert m, line  # still streaming
        if int(m.group(1)) >= 4:
            break
        time.sleep(0.1)
    page.locator("#decoding-stop").click()
    expect(stats).to_contain_text("stopped by you after", timeout=10_000)
    time.sleep(3.0)  # nothing of the cancelled run may arrive after the Stop line
    line = stats.inner_text()
    n = int(re.search(r"stopped by you after (\d+) of 200 new tokens", line).group(1))
    assert 4 <= n < 200, line
    assert "partial run" in line and "greedy" in line
    assert "sequence log-prob" not in line and "tokens/s" not in line and line != first
    stopped_text = text.input_value()
    assert stopped_text and stopped_text != first_text
    time.sleep(2.0)
    # Gradio's status tracker may still show the cancelled event's timer ("2.9s") over the line:
    # that is not content. The line itself and the text must be unchanged.
    assert text.input_value() == stopped_text and _content(stats.inner_text()) == _content(line), \
        "the run went on after Stop"
    assert table(page, "decoding-steps")[1] == []  # no step table of the previous run beside this text
    assert page.locator("#decoding-error").is_hidden()  # a Stop is not an error
    shot(page, "decoding_stopped_partial")

    # The next full run replaces the partial line with its own stats.
    set_number(page, "decoding-max-new", 4)
    run_and_wait(page, "greedy")
    expect(stats).not_to_contain_text("stopped by you")
    expect(stats).to_contain_text("4 tokens in")


def _content(line: str) -> str:
    return re.sub(r"^\s*\d+(\.\d+)?s\s*", "", line).strip()


def disabled(page, elem_id) -> bool:
    return page.locator(f"#{elem_id} input").first.is_disabled()


def test_knobs_a_strategy_ignores_are_greyed_out(page, tab_url):
    open_tab(page, tab_url)
    sampling = ["decoding-temperature", "decoding-top-k", "decoding-top-p", "decoding-seed"]
    beam = ["decoding-beams", "decoding-length-penalty", "decoding-early-stopping"]
    # greedy (the default): neither group, and one sequence
    assert all(disabled(page, e) for e in sampling + beam + ["decoding-n-return"])
    expect(page.locator("#decoding-sampling-head")).to_contain_text("not used by greedy")
    pick_strategy(page, "sample")
    expect(page.locator("#decoding-temperature input").first).to_be_enabled(timeout=10_000)
    assert not any(disabled(page, e) for e in sampling) and all(disabled(page, e) for e in beam)
    assert not disabled(page, "decoding-n-return")
    expect(page.locator("#decoding-beam-head")).to_contain_text("not used by sample")
    expect(page.locator("#decoding-sampling-head")).not_to_contain_text("not used")
    shot(page, "decoding_knobs_sample")
    set_number(page, "decoding-n-return", 3)
    pick_strategy(page, "beam")
    expect(page.locator("#decoding-beams input").first).to_be_enabled(timeout=10_000)
    assert all(disabled(page, e) for e in sampling) and not any(disabled(page, e) for e in beam)
    pick_strategy(page, "greedy")
    expect(page.locator("#decoding-beams input").first).to_be_disabled(timeout=10_000)
    # greedy returns exactly one sequence: the greyed slider says 1, and the run is not refused for it
    expect(page.locator("#decoding-n-return input[type=number]")).to_have_value("1")
    set_number(page, "decoding-max-new", 3)
    run_and_wait(page, "greedy")
    assert page.locator("#decoding-error").is_hidden()
    shot(page, "decoding_knobs_greedy")
