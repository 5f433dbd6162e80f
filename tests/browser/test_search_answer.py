"""Ask the corpus in headless Chromium, the Semantic search tab served alone on the local profile: the
extractive answer of the reader trained here (adapted to the glossary) is on screen before the generated one,
highlighted in its passage, with its margin; the page says which answer to trust; what the passages do not
support is marked; no note says there is no extractive model."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import settled, shot
from tests.helpers.tab_app import served_tab


@pytest.fixture(scope="module")
def search_url():
    from components.search import ui as search

    with served_tab(search.build, themed=True) as url:
        yield url


def test_the_extractive_answer_is_shown_beside_the_generated_one(page, search_url):
    from backend import hub
    from backend.runtime import config

    if hub.get_hub().resolve("qa").method != config.METHOD_FINETUNED:
        pytest.skip("the qa role is not the reader trained here")
    page.goto(search_url)
    page.locator("#search-build").click()
    expect(page.locator("#search-stats")).to_contain_text("index over", timeout=240_000)
    settled(page)
    page.get_by_text("Ask the corpus (retriever-reader)").click()
    page.locator("#search-question textarea, #search-question input").first.fill(
        "How many languages was XLM-RoBERTa pretrained on?")
    page.locator("#search-ask").click()
    answer = page.locator("#search-answer")
    expect(answer).to_contain_text("Extractive answer", timeout=240_000)
    settled(page)
    expect(answer).to_contain_text("Generated answer")
    expect(answer).to_contain_text("Not in the passages")
    expect(answer).to_contain_text("best span - [CLS]")
    span = answer.locator("blockquote mark.tlab-span").inner_text().strip()  # the span, highlighted in its passage
    assert span and f"{span} from [" in answer.inner_text()  # the same span as the answer line names
    expect(answer).to_contain_text("Which to trust")
    expect(answer).to_contain_text("Retrieved passages")
    text = answer.inner_text()
    assert "no extractive QA model" not in text and "offline" not in text
    assert answer.locator("a").count() == 0  # no link the result does not hold
    shot(page, "search_ask_extractive")
