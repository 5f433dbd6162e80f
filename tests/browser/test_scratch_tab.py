"""The From scratch tab in a browser: train a small vocabulary, drag the replay slider back to
the characters and forward again, and see the chips, plots, the check line and the code.

The tab is built here into its own small Blocks app (from `components.scratch.ui.build()`), so the
test does not depend on how app.py registers tabs."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import overflowing_tables, press_again, shot
from tests.helpers.tab_app import served_tab

TIMEOUT = 120_000  # the first run loads the two real tokenizers


@pytest.fixture(scope="module")
def scratch_url():
    from components.scratch import ui as scratch

    with served_tab(scratch.build, themed=True) as url:
        yield url


def chips(page) -> list[tuple[str, str]]:
    """(text, background colour) of every chip of the replay."""
    return [tuple(c) for c in page.evaluate(
        """() => [...document.querySelectorAll('#scratch-chips .textfield .token')].map(
               t => [t.querySelector('.text').textContent, getComputedStyle(t).backgroundColor])""")]


def set_steps(page, n: int) -> None:
    box = page.locator("#scratch-steps input[type=number]")
    box.fill(str(n))
    box.press("Enter")


def train(page, url: str, vocab: int = 300) -> None:
    page.goto(url)
    box = page.locator("#scratch-vocab input[type=number]")
    box.fill(str(vocab))
    box.press("Enter")
    page.locator("#scratch-sentence textarea").fill("Tokenizers learn merges from the training text.")
    page.locator("#scratch-go").click()
    expect(page.locator("#scratch-summary")).to_contain_text("trained on", timeout=TIMEOUT)


def test_train_then_replay_the_merges_with_the_slider(page, scratch_url):
    train(page, scratch_url)
    expect(page.locator("#scratch-intro")).to_contain_text("Chapter 10")
    expect(page.locator("#scratch-caption")).to_contain_text(re.compile(r"After \d+ of \d+ merges"))
    expect(page.locator("#scratch-lengths .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#scratch-tpw-plot .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#scratch-merges")).to_contain_text("new token")
    expect(page.locator("#scratch-tpw")).to_contain_text("WordPiece of the embedder")
    final = chips(page)
    letters = sum(len(w) for w in re.findall(r"\w+|[^\w\s]+", "Tokenizers learn merges from the training text."))
    assert 0 < len(final) < letters

    set_steps(page, 0)  # before any merge: one chip per character
    expect(page.locator("#scratch-caption")).to_contain_text("After 0 of", timeout=30_000)
    expect(page.locator("#scratch-chips .textfield .token")).to_have_count(letters)
    at_zero = chips(page)
    assert [t for t, _ in at_zero] == list("Tokenizerslearnmergesfromthetrainingtext.")

    set_steps(page, 40)  # some merges later: fewer, longer chips, one of them just made (green)
    expect(page.locator("#scratch-caption")).to_contain_text("After 40 of", timeout=30_000)
    page.wait_for_function("n => document.querySelectorAll('#scratch-chips .textfield .token').length < n", arg=letters)
    middle = chips(page)
    assert len(final) <= len(middle) < len(at_zero)
    assert middle != at_zero and [t for t, _ in middle] != [t for t, _ in at_zero]
    shot(page, "scratch_replay_40")

    page.locator("#scratch-code-box").get_by_text("The from-scratch BPE").click()
    expect(page.locator("#scratch-check")).to_contain_text("learned exactly the library's BPE merges")
    expect(page.locator("#scratch-code")).to_contain_text("def get_stats")
    assert overflowing_tables(page, "#scratch-merges") == []
    shot(page, "scratch_tab")
    assert not page.blocked_requests, page.blocked_requests


def test_a_bad_input_says_what_to_do_and_blanks_the_old_result(page, scratch_url):
    train(page, scratch_url, vocab=200)
    page.locator("#scratch-corpus").get_by_text("Paste text", exact=True).click()
    page.locator("#scratch-text textarea").fill("!!! ??? ...")
    page.locator("#scratch-go").click()
    expect(page.locator("#scratch-error")).to_contain_text("no letters or digits", timeout=60_000)
    expect(page.locator("#scratch-chips .textfield .token")).to_have_count(0)
    expect(page.locator("#scratch-summary")).not_to_contain_text("trained on")
    shot(page, "scratch_error")


def test_wordpiece_and_unigram_say_what_their_steps_are(page, scratch_url):
    page.goto(scratch_url)
    page.locator("#scratch-corpus").get_by_text("The NLP glossary (62 KB)", exact=True).click()
    page.locator("#scratch-algorithm").get_by_text("Unigram", exact=True).click()
    page.locator("#scratch-go").click()
    expect(page.locator("#scratch-summary")).to_contain_text("Unigram", timeout=TIMEOUT)
    expect(page.locator("#scratch-steps")).to_contain_text("after N most probable pieces")
    expect(page.locator("#scratch-merges")).to_contain_text("log-probability")
    expect(page.locator("#scratch-caption")).to_contain_text("most probable pieces kept")
    shot(page, "scratch_unigram")

    page.locator("#scratch-algorithm").get_by_text("WordPiece", exact=True).click()
    press_again(page, "#scratch-go")
    expect(page.locator("#scratch-summary")).to_contain_text("WordPiece", timeout=TIMEOUT)
    expect(page.locator("#scratch-steps")).to_contain_text("after N merges")
    expect(page.locator("#scratch-merges")).to_contain_text("##")  # continuations carry the mark
    expect(page.locator("#scratch-chips")).to_contain_text("##")
    page.locator("#scratch-code-box").get_by_text("The from-scratch BPE").click()
    expect(page.locator("#scratch-check")).to_contain_text("hash order")
    shot(page, "scratch_wordpiece")
