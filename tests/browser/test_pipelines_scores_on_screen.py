"""Pipelines in headless Chromium, from the learner's side: every number on screen belongs to
what they just did. A score only against the reference of the text that was run; the book's
baseline beside a summary; the fallback named on its output; generation knobs a strategy
ignores greyed out."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import press_again, shot
from tests.helpers.pipelines_page import open_subtab

TAB = "pipelines"  # its page holds this tab alone (tab_url, tests/conftest.py)

RUN_TIMEOUT = 180_000
OWN_TEXT = ("The museum opened a new wing on Monday. It shows paintings from the 1920s. Visitors queued for "
            "hours. The director said more rooms will open next year.")


def test_summary_scores_only_against_its_own_reference(page, tab_url):
    open_subtab(page, tab_url, "Summarization")
    page.get_by_role("button", name="The Eiffel Tower", exact=True).first.click()
    reference = page.locator("#pl-summarize-reference textarea")
    expect(reference).to_have_value(re.compile("Eiffel Tower in Paris"))
    expect(page.locator("#pl-summarize-reference-note")).to_contain_text("A reference belongs to one text")
    page.locator("#pl-summarize-run").click()
    scores = page.locator("#pl-summarize-scores")
    expect(scores).to_contain_text("baseline: first 3 sentences", timeout=RUN_TIMEOUT)
    expect(scores).to_contain_text("model summary")
    expect(page.locator("#pl-summarize-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#pl-summarize-baseline textarea")).to_have_value(
        re.compile(r"^The Eiffel Tower is a wrought-iron tower in Paris, France\. .*1889 World's Fair\. "
                   r"At first many artists criticised its design, but it became a global symbol of France\.$"))
    expect(page.locator("#pl-summarize-output")).to_contain_text("instruct-model fallback")
    shot(page, "pipelines_truth_summarize_reference")

    # A text set without a keystroke (fill, as a link or a hand-off sets it): the example's reference,
    # written for the old text, leaves its box at once (the note says why), and the run scores nothing.
    page.locator("#pl-summarize-text textarea").fill(OWN_TEXT)
    expect(reference).to_have_value("")
    expect(page.locator("#pl-summarize-reference-note")).to_contain_text("Reference cleared")
    press_again(page, "#pl-summarize-run")
    expect(page.locator("#pl-summarize-baseline textarea")).to_have_value(
        re.compile(r"^The museum opened a new wing on Monday\. .* Visitors queued for hours\.$"), timeout=RUN_TIMEOUT)
    expect(scores).to_contain_text("No ROUGE: no reference was given with this text")
    expect(page.locator("#pl-summarize-plot .js-plotly-plot")).to_have_count(0)
    expect(page.locator("#pl-summarize-badge")).to_contain_text("No reference given with this text")
    assert "Eiffel" not in page.locator("#pl-summarize-scores").inner_text()
    shot(page, "pipelines_truth_summarize_no_reference")
    # Typing in the text clears the reference at once, and the note says why.
    page.locator("#pl-summarize-text textarea").press_sequentially(" Tickets")
    expect(reference).to_have_value("")
    expect(page.locator("#pl-summarize-reference-note")).to_contain_text("Reference cleared")
    shot(page, "pipelines_truth_summarize_reference_cleared")


def test_translation_is_labelled_and_scored_only_against_its_own_reference(page, tab_url):
    open_subtab(page, tab_url, "Translation")
    page.get_by_role("button", name="The letter's first sentence", exact=True).first.click()
    page.locator("#pl-translate-run").click()
    pair = page.locator("#pl-translate-pair")
    expect(pair).to_contain_text(re.compile(r"BLEU \d+\.\d against the reference given with this text"),
                                 timeout=RUN_TIMEOUT)
    output = page.locator("#pl-translate-output")
    expect(output).to_contain_text("Translation by the instruct-model fallback: a small chat model prompted to "
                                   "translate")
    expect(page.locator("#pl-translate-badge")).to_contain_text("instruct-model fallback")
    shot(page, "pipelines_truth_translate_reference")

    page.locator("#pl-translate-text textarea").fill("The weather is nice today")
    page.locator("#pl-translate-text textarea").press_sequentially(".")  # the learner types
    expect(page.locator("#pl-translate-reference textarea")).to_have_value("")
    expect(page.locator("#pl-translate-reference-note")).to_contain_text("Reference cleared")
    press_again(page, "#pl-translate-run")
    expect(pair).to_contain_text("no BLEU: no reference translation was given with this text", timeout=RUN_TIMEOUT)
    assert not re.search(r"BLEU \d", pair.inner_text())
    shot(page, "pipelines_translate_own_text")


def test_generation_knobs_follow_the_strategy(page, tab_url):
    open_subtab(page, tab_url, "Text generation")
    knobs = {name: page.locator(f"#pl-generate_text-{name} input").first
             for name in ("temperature", "top_k", "top_p", "beams", "seed")}

    def enabled() -> set[str]:
        return {name for name, box in knobs.items() if box.is_enabled()}

    expect(knobs["temperature"]).to_be_disabled()
    assert enabled() == set()  # greedy: none of them does anything
    page.locator("#pl-generate_text-strategy").get_by_label("sample").check()
    expect(knobs["temperature"]).to_be_enabled()
    assert enabled() == {"temperature", "top_k", "top_p", "seed"}
    shot(page, "pipelines_truth_generate_sample_knobs")
    page.locator("#pl-generate_text-strategy").get_by_label("beam").check()
    expect(knobs["beams"]).to_be_enabled()
    assert enabled() == {"beams"}
    page.locator("#pl-generate_text-strategy").get_by_label("greedy").check()
    expect(knobs["beams"]).to_be_disabled()
    assert enabled() == set()
    shot(page, "pipelines_truth_generate_greedy_knobs")
