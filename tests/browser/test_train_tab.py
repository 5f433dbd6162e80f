"""Train tab in headless Chromium: train on the sentiment set with a small budget, see the
comparison, the plots and the hardest examples, then classify with the trained model."""

from __future__ import annotations

import re

from playwright.sync_api import expect

try:
    from tests.browser.conftest import shot
except ImportError:  # keep the test runnable without the lead's helper
    def shot(page, name):
        import os
        os.makedirs("tests/artifacts", exist_ok=True)
        page.screenshot(path=f"tests/artifacts/{name}.png", full_page=True)


def open_tab(page, app_url):
    page.goto(app_url)
    page.get_by_role("tab", name=re.compile("^Train$")).first.click()
    expect(page.locator("#train-go")).to_be_visible(timeout=30_000)


def test_train_compare_and_classify(page, app_url):
    open_tab(page, app_url)
    page.locator("#train-dataset input[value=sentiment]").check()
    expect(page.locator("#train-estimate")).to_contain_text("328 train", timeout=30_000)
    page.locator("#train-methods label", has_text="fine-tuning").click()  # off: keep the budget small
    page.locator("#train-go").click()
    summary = page.locator("#train-summary")
    expect(summary).to_contain_text("features + logistic regression", timeout=240_000)
    expect(summary).to_contain_text("zero-shot")
    expect(page.locator("#train-status")).to_contain_text("Done", timeout=30_000)
    expect(page.locator("#train-confusion .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#train-map .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-curve .js-plotly-plot")).to_be_visible()
    expect(page.locator("#train-hardest")).to_contain_text("features + logistic regression")
    page.locator("#train-text textarea, #train-text input").first.fill("Broke after a week, a waste of money.")
    page.locator("#train-predict").click()
    expect(page.locator("#train-prediction")).to_contain_text("negative", timeout=60_000)
    shot(page, "train_tab")
    assert not getattr(page, "blocked_requests", [])


def test_bad_upload_says_why_before_training(page, app_url, tmp_path):
    f = tmp_path / "few.csv"
    f.write_text("text,label\nnice,pos\ngreat,pos\nbad,neg\n")
    open_tab(page, app_url)
    page.locator("#train-file input[type=file]").set_input_files(str(f))
    expect(page.locator("#train-dataset input[value=upload]")).to_be_checked(timeout=20_000)
    expect(page.locator("#train-estimate")).to_contain_text("Too few examples", timeout=30_000)
    page.locator("#train-go").click()
    expect(page.get_by_text(re.compile("Too few examples")).last).to_be_visible(timeout=30_000)
    shot(page, "train_bad_upload")
