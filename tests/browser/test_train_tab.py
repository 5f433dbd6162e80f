"""Train tab in headless Chromium: train on the sentiment set with a small budget, see the
comparison, the plots and the hardest examples, then classify with the trained model."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import open_raw_json, overflowing_tables, press_again, shot
from tests.helpers.lifecycle_page import an_error_leaves_nothing
from tests.helpers.train_page import set_budget, open_tab

TAB = ("train", "pipelines")  # its page holds the Train tab and the Pipelines tab it hands a model to (tab_url)


def test_train_compare_and_classify(page, tab_url):
    open_tab(page, tab_url)
    page.locator("#train-dataset input[value=sentiment]").check()
    expect(page.locator("#train-estimate")).to_contain_text("380 train", timeout=30_000)
    page.locator("#train-methods label", has_text="fine-tuning").click()  # off: keep the budget small
    page.locator("#train-go").click()
    summary = page.locator("#train-summary")
    expect(summary).to_contain_text("features + logistic regression", timeout=240_000)
    expect(summary).to_contain_text("zero-shot")
    expect(page.locator("#train-status")).to_contain_text("Done", timeout=30_000)
    expect(page.locator("#train-confusion .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#train-map .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-curve .js-plotly-plot")).to_be_visible()
    # Fine-tuning did not run: its loss and map are not shown as blank axes.
    expect(page.locator("#train-loss")).to_be_hidden()
    expect(page.locator("#train-map-finetuned")).to_be_hidden()
    expect(page.locator("#train-hardest")).to_contain_text("features + logistic regression")
    page.locator("#train-text textarea, #train-text input").first.fill("Broke after a week, a waste of money.")
    page.locator("#train-predict").click()
    expect(page.locator("#train-prediction")).to_contain_text("negative", timeout=60_000)
    shot(page, "train_tab")
    assert not getattr(page, "blocked_requests", [])


def test_a_short_fine_tune_shows_its_loss_and_both_maps(page, tab_url):
    open_tab(page, tab_url)
    page.locator("#train-dataset input[value=sentiment]").check()
    for label in ("zero-shot", "features + logistic regression"):  # fine-tuning alone
        page.locator("#train-methods label", has_text=label).click()
    page.get_by_text("Learning curve (8", exact=False).first.click()
    page.get_by_text("Fine-tuning budget").first.click()
    set_budget(page, "train-epochs", 1, "x 1 epoch:")
    set_budget(page, "train-max-examples", 48, "48 examples x 1 epoch:")
    page.locator("#train-go").click()
    expect(page.locator("#train-status")).to_contain_text("Done", timeout=240_000)
    expect(page.locator("#train-loss .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-map .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-map-finetuned .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-curve")).to_be_hidden()
    expect(page.locator("#train-summary")).to_contain_text("fine-tuning")
    shot(page, "train_fine_tune")


def test_bad_upload_says_why_before_training(page, tab_url, tmp_path):
    f = tmp_path / "few.csv"
    f.write_text("text,label\nnice,pos\ngreat,pos\nbad,neg\n")
    open_tab(page, tab_url)
    page.locator("#train-file input[type=file]").set_input_files(str(f))
    expect(page.locator("#train-dataset input[value=upload]")).to_be_checked(timeout=20_000)
    expect(page.locator("#train-estimate")).to_contain_text("Too few examples", timeout=30_000)
    page.locator("#train-go").click()
    expect(page.get_by_text(re.compile("Too few examples")).last).to_be_visible(timeout=30_000)
    shot(page, "train_bad_upload")


def test_errors_inline_raw_json_tables_use_in_pipelines_and_download(page, tab_url):
    """UX rules 1-3 after a result, then "Use in Pipelines" (the Classify badge names the session's
    classifier) and "Download" (a zip). It ends on the Pipelines tab."""
    open_tab(page, tab_url)
    page.locator("#train-dataset input[value=sentiment]").check()
    page.locator("#train-methods label", has_text="fine-tuning").click()
    page.get_by_text("Learning curve (8", exact=False).first.click()  # off: the fastest run
    page.locator("#train-go").click()
    expect(page.locator("#train-status")).to_contain_text("Done", timeout=240_000)
    expect(page.locator("#train-hardest")).to_contain_text("features + logistic regression")
    expect(page.locator("#train-curve")).to_be_hidden()  # no curve asked for: no blank axes
    expect(page.locator("#train-map .js-plotly-plot")).to_be_visible()
    assert open_raw_json(page, "#train-tab") == 0
    assert overflowing_tables(page, "#train-tab") == []
    shot(page, "train_result")
    # Rule 1: a good prediction, then a bad one: the old result goes, one inline message shows.
    box = page.locator("#train-text textarea, #train-text input").first
    box.fill("Broke after a week, a waste of money.")
    page.locator("#train-predict").click()
    expect(page.locator("#train-prediction")).to_contain_text("negative", timeout=60_000)
    box.fill("   ")
    press_again(page, "#train-predict")
    expect(page.locator("#train-predict-error")).to_contain_text("text", timeout=30_000)
    expect(page.locator("#train-prediction")).to_have_count(0)
    shot(page, "train_predict_error")
    # Rule 1 for the training run itself: then a run that fails (an upload with no file): one inline
    # message, nothing of the good run on screen, its link and address gone; its model is not lost.
    assert "dataset=sentiment" in page.evaluate("() => location.search")  # the good run wrote its link
    an_error_leaves_nothing(page, "train-go", "train-error", ["train-status", "train-summary"],
                            ["train-loss", "train-confusion", "train-map", "train-map-finetuned", "train-curve"],
                            lambda p: p.locator("#train-dataset input[value=upload]").check())
    expect(page.locator("#train-error")).to_contain_text("no file came")
    expect(page.locator("#train-hardest")).not_to_contain_text("logistic regression")  # its headers only
    expect(page.locator("#train-link a")).to_have_count(0)
    page.wait_for_function("() => location.search === '?tab=train'", timeout=10_000)
    shot(page, "train_error_after_a_good_run")
    # Use in Pipelines: this session's Classify is served by the trained classifier (the good run's).
    page.locator("#train-use input[type=checkbox]").check()
    expect(page.locator("#train-use-status")).to_contain_text("In use in Pipelines", timeout=30_000)
    page.locator("#train-download").click()
    expect(page.locator("#train-download-file")).to_contain_text(".zip", timeout=120_000)
    expect(page.locator("#train-download-status")).to_contain_text("test accuracy")
    shot(page, "train_use_and_download")
    page.get_by_role("tab", name=re.compile(r"^\s*Pipelines", re.I)).first.click()
    page.locator("#pl-classify-run").click()
    expect(page.locator("#pl-classify-badge")).to_contain_text("your classifier trained on sentiment",
                                                                timeout=60_000)
    shot(page, "train_used_in_pipelines")
    assert not page.blocked_requests, page.blocked_requests
