"""The Why tab served alone, in headless Chromium, on the offline NER model: what the page concludes is
what its checks allow (backend/why/claims.py). The tagged word is shown in place and its absence from
the scores explained; colours are measured against the stated change explained; the signless rows are green,
never red or blue; no method is named most faithful when one removal decides the deletion test."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import settled, shot
from tests.helpers.tab_app import served_tab

SIGNED = re.compile(r"rgba\((?:214,39,40|31,119,180),")


@pytest.fixture(scope="module")
def why_url():
    from components.why import ui as why

    with served_tab(why.build, themed=True) as url:
        yield url


def test_ner_names_the_tagged_word_scales_to_the_change_and_claims_only_what_holds(page, why_url):
    page.goto(why_url)
    page.locator("#why-task input[value=ner]").check()
    page.locator("#why-text textarea").fill("Angela Merkel visited London")
    page.locator("#why-word textarea, #why-word input").first.fill("London")
    page.locator("#why-run").click()
    summary = page.locator("#why-summary")
    expect(summary).to_contain_text("Most faithful here", timeout=240_000)
    settled(page)
    expect(summary).to_contain_text("Not in the scores")
    expect(summary).to_contain_text("f(text) - f(baseline)")
    expect(page.locator("#why-strip .why-focus").first).to_have_text("London")
    rows = page.locator("#why-strip .why-row")
    for i in range(rows.count()):
        row = rows.nth(i)
        styles = " ".join(t.get_attribute("style") or "" for t in row.locator(".why-tok").all())
        if "no sign" in row.locator(".why-method").inner_text():
            assert not SIGNED.search(styles)  # rollout and raw attention: green shares, never raises/lowers
    # measured on the offline NER model: removing 'visited' alone takes p(B-LOC) from 0.9989 to 0.0001
    expect(summary).to_contain_text("Most faithful here: not claimed.")
    expect(summary).to_contain_text("one token decides the test")
    shot(page, "why_ner_claims")
