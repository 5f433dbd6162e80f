"""The From scratch tab's tiny GPT in a browser: see the plan, train 30 steps, watch the loss
plot and the samples labelled with their step, the final numbers, the download; Stop keeps
the partial model. The tab is built into its own small Blocks app, like test_scratch_tab.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import shot
from tests.helpers.tab_app import served_tab

TIMEOUT = 120_000


@pytest.fixture(scope="module")
def gpt_url():
    from components.scratch import ui as scratch

    with served_tab(scratch.build, themed=True) as url:
        yield url


def set_number(page, elem_id: str, n) -> None:
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(n))
    box.press("Enter")


def test_train_30_steps_and_see_the_loss_the_samples_and_the_download(page, gpt_url):
    page.goto(gpt_url)
    expect(page.locator("#scratch-gpt-intro")).to_contain_text("tiny GPT trained from scratch")
    set_number(page, "scratch-gpt-steps", 30)
    expect(page.locator("#scratch-gpt-plan")).to_contain_text("30 steps", timeout=30_000)
    expect(page.locator("#scratch-gpt-plan")).to_contain_text("it fits")
    page.locator("#scratch-gpt-go").click()
    expect(page.locator("#scratch-gpt-status")).to_contain_text("Trained all 30 steps", timeout=TIMEOUT)
    expect(page.locator("#scratch-gpt-loss .js-plotly-plot")).to_be_visible(timeout=30_000)
    expect(page.locator("#scratch-gpt-loss")).to_contain_text("validation loss")
    samples = page.locator("#scratch-gpt-samples .gpt-sample")
    expect(samples).to_have_count(2)  # step 30 (newest first), then step 0
    expect(samples.first).to_contain_text("step 30")
    expect(samples.last).to_contain_text("step 0")
    status = page.locator("#scratch-gpt-status").inner_text()
    assert re.search(r"[\d,]+ parameters", status) and "tokens/s" in status, status
    shot(page, "scratch_gpt_trained")
    page.locator("#scratch-gpt-download").click()
    expect(page.locator("#scratch-gpt-download-status")).to_contain_text("model.safetensors", timeout=60_000)
    expect(page.locator("#scratch-gpt-file")).to_be_visible()
    assert not page.blocked_requests, page.blocked_requests


def test_stop_keeps_the_model_trained_so_far(page, gpt_url):
    page.goto(gpt_url)
    page.locator("#scratch-gpt-layers input[type=number]").fill("1")
    page.locator("#scratch-gpt-layers input[type=number]").press("Enter")
    set_number(page, "scratch-gpt-steps", 500)
    expect(page.locator("#scratch-gpt-plan")).to_contain_text("500 steps", timeout=30_000)
    page.locator("#scratch-gpt-go").click()
    expect(page.locator("#scratch-gpt-status")).to_contain_text(re.compile(r"Step \d+/500"), timeout=TIMEOUT)
    page.locator("#scratch-gpt-stop").click()
    expect(page.locator("#scratch-gpt-status")).to_contain_text(re.compile(r"of 500 steps.*stopped"), timeout=60_000)
    expect(page.locator("#scratch-gpt-download")).to_be_enabled()
    shot(page, "scratch_gpt_stopped")


def test_a_plan_that_cannot_fit_is_said_before_training(page, gpt_url):
    page.goto(gpt_url)
    set_number(page, "scratch-gpt-layers", 6)
    set_number(page, "scratch-gpt-steps", 2000)
    expect(page.locator("#scratch-gpt-plan")).to_contain_text("does not fit", timeout=30_000)
    page.locator("#scratch-gpt-go").click()
    expect(page.locator("#scratch-gpt-error")).to_contain_text("does not fit one request", timeout=60_000)
