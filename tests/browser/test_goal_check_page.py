"""Goals checked on the page (components/shell/challenges.py), on a page holding Start and Tokenizers: a link
reopens a goal with its answer, Check runs the model and shows the verdict with its evidence, a malformed
answer is refused in words, the solved mark stays in this browser and shows on the chapter's Start card too,
and "Try it in the tab" opens the tab with the answer loaded."""

from __future__ import annotations

import json
from urllib.parse import quote

from playwright.sync_api import expect

from tests.helpers.browser import settled, shot

TAB = ("start", "tokenizers")  # a cross-tab flow: the Start card and the tab share one goal's progress
GOAL = "tokenizers-disagree"
ANSWER = {"text": "    def   FooBar(x):  return  x  **  2   # \U0001f917\U0001f917"}
ITEM = f"#ch-tokenizers-{GOAL}"


def test_a_goal_is_reopened_by_its_link_checked_and_kept_as_solved(page, tab_url):
    text = json.dumps(ANSWER, ensure_ascii=False)
    page.goto(tab_url + f"?tab=tokenizers&challenge={GOAL}&answer=" + quote(text))
    item = page.locator(ITEM)
    expect(page.locator("#challenges-tokenizers details.tlab-ch")).to_have_attribute("open", "", timeout=60_000)
    expect(item).to_have_attribute("open", "")  # the link opened this goal in its section
    expect(item.locator(".tlab-ch-answer")).to_have_value(text)
    item.locator(".tlab-ch-answer").fill("{\"text\": ")
    item.locator(".tlab-ch-check").click()
    expect(item.locator(".tlab-ch-error")).to_contain_text("not valid JSON", timeout=60_000)
    item.locator(".tlab-ch-answer").fill(text)
    item.locator(".tlab-ch-check").click()
    verdict = item.locator(".tlab-ch-verdict")
    expect(verdict.locator(".tlab-ch-pass")).to_contain_text("Passed. WordPiece", timeout=120_000)
    expect(verdict.locator("summary")).to_contain_text("Evidence")
    verdict.locator("summary").click()
    expect(verdict.locator("pre")).to_contain_text('"byte_level_bpe"')
    expect(item).to_have_class("tlab-ch-item tlab-ch-solved")
    shot(page, "goal-solved-in-tokenizers")
    assert GOAL in json.loads(page.evaluate("localStorage.getItem('tlab-challenges-done')"))
    # a goal the learner has not reached: the reason and the hint, no solved mark added
    other = page.locator("#ch-tokenizers-unknown-to-wordpiece")
    other.locator("summary").click()
    other.locator(".tlab-ch-answer").fill('{"text": "hello world"}')
    other.locator(".tlab-ch-check").click()
    expect(other.locator(".tlab-ch-fail")).to_contain_text("no [UNK]", timeout=60_000)
    expect(other.locator(".tlab-ch-hint")).to_contain_text("Hint:")
    expect(other).not_to_have_class("tlab-ch-item tlab-ch-solved")
    # "Try it in the tab" carries the answer into the tab's text box
    try_it = item.locator(".tlab-ch-try")
    assert "text=" in try_it.get_attribute("href")
    try_it.click()
    expect(page.locator("#tok-text textarea")).to_have_value(ANSWER["text"], timeout=60_000)
    settled(page)
    # the Start card of chapter 2 shows the same goal solved (one progress per browser), after a reload too
    page.goto(tab_url + "?tab=start")
    card = page.locator(f"#ch-start-ch2-{GOAL}")
    expect(card).to_have_class("tlab-ch-item tlab-ch-solved", timeout=60_000)
    expect(page.locator("#challenges-start-ch2 .tlab-ch-count")).to_have_text("1")
    page.locator("#challenges-start-ch2 summary.tlab-ch-title").click()
    expect(card.locator(".tlab-ch-done")).to_be_visible()
    shot(page, "goal-solved-on-start-card")
    # the card's own link opens the goal in its tab's section, with the answer written on the card
    card.locator("summary").click()
    card.locator(".tlab-ch-answer").fill('{"text": "Hello there"}')
    card.locator(".tlab-ch-link").click()
    expect(page.locator(ITEM)).to_have_attribute("open", "", timeout=60_000)
    expect(page.locator(ITEM).locator(".tlab-ch-answer")).to_have_value('{"text": "Hello there"}')
