"""The Interventions tab in headless Chromium: one ablation on the real decoder draws its charts and
says which model and spec; the helper writes the spec; a bad spec shows a readable error.

The tab is served from its own `build()` in a small Blocks app (app.py registers it among the
others; this test needs only the tab)."""

from __future__ import annotations

import re

import pytest

from tests.helpers.app import ARTIFACTS
from tests.helpers.tab_app import served_tab

TIMEOUT = 240_000  # first use loads the decoder; the box is shared and slow


@pytest.fixture(scope="module")
def tab_url():
    from components.interventions import ui as interventions

    with served_tab(interventions.build) as url:
        yield url


@pytest.fixture
def ui(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("button", name="Run with and without").wait_for(timeout=60_000)
    return page


def _shot(page, name: str, elem_id: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(f"#{elem_id}").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"interventions_{name}.png"), full_page=False)


def test_one_ablation_draws_the_charts(ui):
    page = ui
    spec = page.locator("#interventions-spec textarea")
    spec.fill("")
    page.get_by_role("button", name="Add to the spec").click()  # layer 0, head 0, remove
    page.wait_for_function("() => document.querySelector('#interventions-spec textarea').value === 'L0H0=0'")
    spec.fill("L3H*=0, L5.mlp=0")
    page.get_by_label("Greedy tokens to continue", exact=False).fill("3")
    page.get_by_role("button", name="Run with and without").click()
    summary = page.locator("#interventions-summary")
    summary.get_by_text(re.compile(r"KL\(before ‖ after\) = \d")).wait_for(timeout=TIMEOUT)
    said = summary.inner_text()
    assert "SmolLM2-135M-Instruct" in said and "L3H*=0, L5.mlp=0" in said and "30 layers × 9 heads" in said
    assert "Checked another way" in said and "✅" in said
    page.locator("#interventions-next .main-svg").first.wait_for(timeout=TIMEOUT)
    bars = page.locator("#interventions-next .bars path")
    assert bars.count() >= 2 * 8  # top 8 both ways, at least: two bars per token
    assert "Paris" in page.locator("#interventions-next").inner_text()
    page.locator("#interventions-flips .main-svg").first.wait_for(timeout=TIMEOUT)
    before = page.locator("#interventions-before textarea").input_value()
    after = page.locator("#interventions-after textarea").input_value()
    assert before.startswith("The capital of France is") and after.startswith("The capital of France is")
    assert len(before) > len("The capital of France is")
    assert "SmolLM2" in page.locator("#interventions-badge").inner_text()
    _shot(page, "decoder", "interventions-next")
    _shot(page, "flips", "interventions-flips")
    # after a run, the helper offers this model's heads only (SmolLM2 has 9 per layer)
    page.get_by_label("Which").click()
    options = page.get_by_role("option")
    names = [options.nth(i).inner_text() for i in range(options.count())]
    assert "head 8" in names and "head 9" not in names
    page.keyboard.press("Escape")


def test_a_bad_spec_is_readable(ui):
    page = ui
    page.locator("#interventions-spec textarea").fill("L99H0=0")
    page.get_by_role("button", name="Run with and without").click()
    error = page.locator("#interventions-error")
    error.get_by_text(re.compile("layer 99 does not exist")).wait_for(timeout=TIMEOUT)
    _shot(page, "error", "interventions-error")


def test_encoder_and_the_sweep(ui):
    page = ui
    page.get_by_label("encoder").check()
    page.get_by_label("Text", exact=True).fill("The movie was wonderful and the actors were brilliant.")
    page.locator("#interventions-spec textarea").fill("L0.mlp=0, L1H*=0")
    page.get_by_role("button", name="Run with and without").click()
    summary = page.locator("#interventions-summary")
    summary.get_by_text(re.compile(r"Cosine between the sentence embeddings before and after = 0\.\d+")).wait_for(
        timeout=TIMEOUT)
    said = summary.inner_text()
    assert "all-MiniLM-L6-v2" in said and "6 layers × 12 heads" in said and "L0.mlp=0, L1H*=0" in said
    assert "sentiment classifier" in said
    page.locator("#interventions-flips .main-svg").first.wait_for(timeout=TIMEOUT)
    _shot(page, "encoder", "interventions-summary")
    page.get_by_label("Layer to sweep").fill("1")
    page.get_by_role("button", name="Rank the heads of this layer").click()
    sweep = page.locator("#interventions-sweep-summary")
    sweep.get_by_text(re.compile("all 12 heads removed one at a time")).wait_for(timeout=TIMEOUT)
    page.locator("#interventions-sweep .main-svg").first.wait_for(timeout=TIMEOUT)
    assert page.locator("#interventions-sweep .bars path").count() == 12
    _shot(page, "sweep", "interventions-sweep")
