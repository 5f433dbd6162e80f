"""The first hour, walked from the Start tab: each step's "What to look for" card states numbers equal to
the public API's result for the same example; the attention step opens both sentences at the head its
card names; the steps ticked as done stay ticked in this browser."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from components.shell.book import LETTER
from components.start import route
from components.start.handlers import CARDS
from tests.browser.conftest import shot


def _dict_with(outputs, key):
    """The JSON result among an endpoint's outputs (the one dict that has `key`)."""
    outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
    return next(o for o in outputs if isinstance(o, dict) and key in o)


def _api(client, key):
    """The step's example through the public API: what its tab's own run returns."""
    if key == "pipelines":
        return _dict_with(client.predict(LETTER, False, "", "", api_name="/classify"), "results")
    if key == "tokenizers":
        return _dict_with(client.predict(route.TOKENIZE, True, api_name="/tokenize"), "results")
    if key == "attention":
        return {"payload": _dict_with(client.predict(route.FLIES_A, route.FLIES_B, "encoder", -1,
                                                     api_name="/attention"), "tokens")}
    if key == "anatomy":
        return _dict_with(client.predict("time flies like an arrow", "fruit flies", "encoder", 0, 0, -1, "",
                                         api_name="/anatomy"), "max_abs_diff")
    if key == "decoding":
        return _dict_with(client.predict(route.PROMPT, {"strategy": "greedy", "max_new_tokens": 16},
                                         api_name="/decode"), "steps")
    return _dict_with(client.predict(route.QUESTION, 5, api_name="/search"), "results")


def _numbers(text: str) -> list[str]:
    return re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)


def test_the_first_hour_cards_state_the_api_results_and_open_their_tabs(page, app_url, client):
    page.goto(app_url)
    page.locator("#start-reveal-1").wait_for()
    for i, step in enumerate(route.STEPS, 1):
        expect(page.locator(f"#start-step-{i}-text")).to_contain_text("Predict first:")
        expect(page.locator(f"#start-card-{i}")).not_to_contain_text("What to look for")  # predict, then reveal
        page.locator(f"#start-reveal-{i}").click()
        card = page.locator(f"#start-card-{i}")
        expect(card).to_contain_text("What to look for", timeout=240_000)
        said = card.inner_text()
        expected, _ = CARDS[step.key](_api(client, step.key))
        want = _numbers(re.sub(r"[*\\]", "", expected))
        assert want and _numbers(said) == want, (step.key, said, want)
    shot(page, "start_route_cards")
    # the attention step opens both sentences, at the layer and head its card names
    card = page.locator("#start-card-3").inner_text()
    layer, head = re.search(r"layer (\d+), head (\d+)", card).groups()
    page.locator("#start-open-3").click()
    expect(page.locator("#attention-tab-button")).to_have_attribute("aria-selected", "true")
    texts = page.locator("div[role=tabpanel]#attention-tab textarea")
    expect(texts.nth(0)).to_have_value(route.FLIES_A)
    expect(texts.nth(1)).to_have_value(route.FLIES_B)
    assert f"layer={layer}" in page.url and f"head={head}" in page.url
    shot(page, "start_route_attention_opened")


def test_steps_ticked_as_done_stay_ticked_in_this_browser(page, app_url):
    page.goto(app_url)
    boxes = page.locator(".tlab-start-done input")
    expect(boxes).to_have_count(len(route.STEPS), timeout=60_000)
    boxes.nth(0).check()
    boxes.nth(2).check()
    page.reload()
    boxes = page.locator(".tlab-start-done input")
    expect(boxes).to_have_count(len(route.STEPS), timeout=60_000)
    expect(boxes.nth(0)).to_be_checked()
    expect(boxes.nth(2)).to_be_checked()
    expect(boxes.nth(1)).not_to_be_checked()
    boxes.nth(0).uncheck()
    page.reload()
    expect(page.locator(".tlab-start-done input").nth(0)).not_to_be_checked(timeout=60_000)
    assert page.evaluate("localStorage.getItem('tlab-first-hour-done')") == '["attention"]'
