"""The Train tab's link on its own page (tab_url): it restores the dataset, methods and budget without
training (an upload path in it is ignored); a run then writes the link again, and no figure's text
overlaps; the kept run's link reopens its settings and blanks the run on screen."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.figure_boxes import OVERLAPS

TAB = "train"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_a_train_link_restores_the_settings_without_training(page, tab_url):
    page.goto(tab_url + "?tab=train&dataset=sentiment&methods=probe%2Czero_shot&epochs=5&seed=3"
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

    page.locator("#train-runs").get_by_text("Your runs").first.click()  # open: a closed accordion draws nothing
    page.locator("#train-go").click()  # zero-shot + features: seconds, no fine-tuning
    plot = page.locator("#train-confusion")
    expect(plot.locator(".tlab-notice")).to_contain_text("most accurate", timeout=240_000)
    page.wait_for_function("location.search.includes('tab=train') && location.search.includes('methods=')")
    link = page.evaluate("location.search")
    assert "methods=zero_shot%2Cprobe" in link and "dataset=sentiment" in link and "epochs=5" in link, link
    assert page.evaluate(OVERLAPS, "#train-tab") == []  # "acc 0.67atures + logistic..." no more
    shot(page, "train_link")

    # The kept run's link reopens its settings here, and the run on screen goes with the old settings: its
    # summary, figures and the code written from it are blank until Train is pressed again.
    expect(page.locator("#train-runs-view .tlab-run[data-run='1']")).to_have_count(1, timeout=60_000)
    expect(page.locator("#train-summary")).not_to_be_empty()
    page.locator("#train-epochs input[type=number]").fill("2")
    page.locator("#train-runs-view .tlab-run[data-run='1'] a.tlab-run-open").click()
    expect(page.locator("#train-epochs input[type=number]")).to_have_value("5", timeout=60_000)
    expect(page.locator("#train-summary")).to_be_empty()
    expect(page.locator("#train-confusion .js-plotly-plot")).to_have_count(0)
    page.locator("#train-code").get_by_text("The same in Python").first.click()
    expect(page.locator("#train-code-python")).not_to_contain_text("import")
