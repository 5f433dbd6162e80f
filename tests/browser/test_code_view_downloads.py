"""A tab's "Download as a notebook" after runs in other tabs (components/shell/code_view.py, backend/runtime/
downloads.py): each run's notebook stays on the server for its address, so the Tokenizers tab's button still
downloads its own run's notebook after a run in Attention; and where the server no longer has a notebook, the
line beside the button says so (the download alone would be cancelled without a word)."""

from __future__ import annotations

import json
import os
import re

from playwright.sync_api import expect

from tests.helpers.browser import settled, shot

TAB = ("tokenizers", "attention")  # a page holding these two tabs (tab_url): a run in each


def test_an_earlier_tabs_notebook_downloads_after_a_later_run_elsewhere_and_a_gone_one_is_said(page, tab_url):
    page.goto(tab_url + "?tab=tokenizers")
    page.locator("#tok-text textarea").fill("Earlier tabs keep their notebooks.")
    page.locator("#tok-go").click()
    expect(page.locator("#tok-enc-summary")).to_contain_text("tokens", timeout=240_000)
    settled(page)
    page.get_by_role("tab", name=re.compile(r"^\W*Attention\W*$")).first.click()  # a later run, another tab
    page.locator("#attention-tab").get_by_label("Text (sentence A)").fill("A later run in another tab")
    page.locator("#attention-run").click()
    expect(page.locator("#attention-badge")).to_contain_text("tokens", timeout=240_000)
    settled(page)
    page.locator("#attention-code").get_by_text("The same in Python").click()
    with page.expect_download(timeout=30_000):
        page.locator("#attention-code-notebook").click()  # the later run's notebook: written after the first's
    page.get_by_role("tab", name=re.compile(r"^\W*Tokenizers\W*$")).first.click()
    page.locator("#tok-code").get_by_text("The same in Python").click()
    with page.expect_download(timeout=30_000) as info:
        page.locator("#tok-code-notebook").click()
    download = info.value
    assert download.failure() is None and download.suggested_filename == "tokenize.ipynb"
    cells = json.loads(open(download.path(), encoding="utf-8").read())["cells"]
    sources = ["".join(c["source"]) for c in cells]
    assert any("'text': 'Earlier tabs keep their notebooks.'" in s for s in sources)  # this tab's own run
    assert any("api_name='/tokenize'" in s for s in sources)
    expect(page.locator("#tok-code-gone")).to_have_text("")
    os.remove(download.url.split("file=", 1)[1])  # the server's copy goes (as the oldest past the address's bytes)
    page.locator("#tok-code-notebook").click()
    expect(page.locator("#tok-code-gone")).to_contain_text("no longer on the server", timeout=15_000)
    page.locator("#tok-code-notebook").scroll_into_view_if_needed()
    shot(page, "code_view_notebook_gone")
