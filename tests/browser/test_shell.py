"""A person opens the app: five tabs, the tokenizer explorer works, nothing leaves localhost."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import shot


def test_tabs_present_and_tokenizer_explorer_shows_tokens(page, app_url):
    page.goto(app_url)
    for name in ("Pipelines", "Tokenizers", "Attention", "Decoding", "Semantic search"):
        expect(page.get_by_role("tab", name=re.compile(rf"^\W*{name}\W*$"))).to_be_visible()
    page.get_by_role("tab", name=re.compile(r"^\W*Tokenizers\W*$")).click()
    page.locator("#tok-text textarea").fill("Unbelievably tokenizable sentences")
    page.locator("#tok-go").click()
    expect(page.locator("#tok-enc")).to_contain_text("##", timeout=60_000)
    expect(page.locator("#tok-dec")).to_contain_text("izable", timeout=60_000)
    expect(page.locator("#tok-enc-summary")).to_contain_text("MiniLM")
    shot(page, "shell_tokenizer")
    assert not page.blocked_requests, page.blocked_requests
