"""The Train tab's NER task in headless Chromium: choose the task, see the plan, run a short
training on a slice of the shipped set, see the per-type table, the bars, the confusion matrix
and the error analysis, tag a sentence with the model; a bad upload is refused readably."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import overflowing_tables, shot

TAB = "train"  # its page holds this tab alone (tab_url, tests/conftest.py)


def open_ner(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile("^Train$")).first.click()
    page.locator("#train-task label", has_text="Token classification").click()
    expect(page.locator("#train-ner-go")).to_be_visible(timeout=30_000)
    expect(page.locator("#train-go")).to_be_hidden()  # the classifier's widgets are out of the way


def _max_sentences(page, value: int, shows: str):
    box = page.locator("#train-ner-max-sentences input[type=number]")
    estimate = page.locator("#train-ner-estimate")
    for _ in range(3):  # a value typed while the page still renders can be lost on a loaded box
        box.fill(str(value))
        box.press("Enter")
        try:
            expect(estimate).to_contain_text(shows, timeout=15_000)
            return
        except AssertionError:
            continue
    expect(estimate).to_contain_text(shows)


def test_train_ner_and_see_what_the_book_shows(page, tab_url):
    open_ner(page, tab_url)
    estimate = page.locator("#train-ner-estimate")
    expect(estimate).to_contain_text("steps", timeout=30_000)
    expect(estimate).to_contain_text("PER")
    _max_sentences(page, 48, "Training on 48 sentences: 1 epoch x 3 batches of 16 = 3 steps")
    page.locator("#train-ner-go").click()
    status = page.locator("#train-ner-status")
    expect(status).to_contain_text("Trained: 3 steps", timeout=240_000)
    summary = page.locator("#train-ner-summary")
    expect(summary).to_contain_text("test F1")
    expect(summary).to_contain_text("3 of 3 steps")
    scores = page.locator("#train-ner-scores")
    expect(scores).to_contain_text("overall (micro)")
    expect(page.locator("#train-ner-bars .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#train-ner-bars")).to_contain_text("test split")
    expect(page.locator("#train-ner-confusion .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-ner-confusion")).to_contain_text("predicted tag")
    errors = page.locator("#train-ner-errors")
    expect(errors).to_contain_text("validation sentences")
    assert page.locator("#train-ner-errors .ner-error").count() == 10
    assert overflowing_tables(page, "#train-ner-scores") == []
    page.locator("#train-ner-text textarea, #train-ner-text input").first.fill(
        "Angela Merkel met Emmanuel Macron in Berlin.")
    page.locator("#train-ner-tag").click()
    expect(page.locator("#train-ner-tagged")).to_contain_text("by your NER model (3 steps", timeout=60_000)
    shot(page, "train_ner")
    assert not getattr(page, "blocked_requests", [])


def test_a_bad_upload_is_named_before_training(page, tab_url, tmp_path):
    f = tmp_path / "pos_tags.conll"
    f.write_text("\n\n".join("Angela NNP\nMerkel NNP" for _ in range(12)))
    open_ner(page, tab_url)
    page.locator("#train-ner-file input[type=file]").set_input_files(str(f))
    expect(page.locator("#train-ner-estimate")).to_contain_text("'NNP' is not a BIO tag", timeout=30_000)
    page.locator("#train-ner-go").click()
    expect(page.locator("#train-ner-error")).to_contain_text("'NNP' is not a BIO tag", timeout=30_000)
    shot(page, "train_ner_bad_upload")
