"""The Start page's flow on the whole page, loaded once and walked: an address naming no tab opens it as
usual; the book's chapters as a map with their notebooks; the first hour (after the rest, its cards
still unrevealed), whose "What to look for" cards
state numbers equal to the public API's result for the same example and whose attention step opens both
sentences at the head its card names; the chapters' "Try" buttons, which open the right tab with an
example loaded (NER on a news sentence found by the model trained here); every tab naming its chapter and linking its notebook; and the transformer picture,
each part of which opens in this page the tab that computes it with the part's parameters.
(Ticking a step as done is the Start tab's own: tests/browser/test_start_tab.py.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from components.shell import course
from components.shell.book import LETTER
from components.start import route
from components.start.handlers import CARDS
from tests.helpers.browser import shot

NEWS = "Angela Merkel met Emmanuel Macron in Berlin to discuss Airbus."
# A hostile address: the last tab= wins, and "x" is no tab, so the page opens on Start as usual.
HOSTILE = "?tab=decoding&max_new=1e99&temperature=-5&strategy=%3Cscript%3E&top_p=NaN&tab=x"


def _tab(page, name: str):
    return page.locator("#main-tabs").get_by_role("tab", name=re.compile(rf"^\W*{name}\W*$"))


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


def _chapter_map(page):
    expect(page.locator("#start-intro")).to_contain_text("Start here")
    expect(page.locator("#start-route")).to_contain_text("A first hour")
    for c in course.CHAPTERS:
        row = page.locator(f"#start-ch{c.number}")
        expect(row).to_contain_text(f"{c.number}. {c.title}")
        expect(row.get_by_role("link", name="notebook")).to_have_attribute("href", c.notebook_url)
        expect(page.locator(f"#start-try-{c.number}")).to_have_count(1 if c.try_query else 0)
    shot(page, "start_chapter_map")


def _first_hour(page, client):
    _tab(page, "Start").click()
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
    texts = page.locator("div[role=tabpanel]#attention-tab textarea:not(.tlab-ch-answer)")
    expect(texts.nth(0)).to_have_value(route.FLIES_A)
    expect(texts.nth(1)).to_have_value(route.FLIES_B)
    assert f"layer={layer}" in page.url and f"head={head}" in page.url
    shot(page, "start_route_attention_opened")


def _transformer_picture(page):
    page.locator("#start-tab-button").click()
    figure = page.locator("#start-arch svg")
    expect(figure).to_be_visible(timeout=60_000)
    shot(page, "start_arch")
    parts = page.evaluate("""() => [...document.querySelectorAll('#start-arch a.tlab-part')]
        .map(a => ({part: a.dataset.part, tab: a.dataset.tab, href: a.getAttribute('href')}))""")
    assert len(parts) >= 14
    start_url = page.url
    for p in parts:
        page.locator("#start-tab-button").click()
        expect(page.locator("#start-tab-button")).to_have_attribute("aria-selected", "true")
        page.locator(f"#start-arch a.tlab-part[data-part='{p['part']}']").click()
        expect(page.locator(f"#{p['tab']}-tab-button")).to_have_attribute("aria-selected", "true", timeout=60_000)
        assert page.url.split("?")[0] == start_url.split("?")[0], p  # opened in place, not a new page
        if p["part"] == "decoder-feed-forward":  # the part's parameters came with it
            expect(page.locator("#interventions-spec textarea, #interventions-spec input").first).to_have_value(
                "L0.mlp=0", timeout=30_000)
    expect(page.locator("#start-arch figcaption")).to_contain_text("residual stream")


def _try_buttons(page):
    # Chapter 3: Attention, with the book's sentence, and (cheap) already run.
    _tab(page, "Start").click()
    page.locator("#start-try-3").click()
    expect(_tab(page, "Attention")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#attention-tab textarea:not(.tlab-ch-answer)").first).to_have_value("time flies like an arrow")
    expect(page.locator("#attention-badge")).to_contain_text("7 tokens", timeout=120_000)  # [CLS] 5 words [SEP]
    expect(page.locator("#attention-chapter")).to_contain_text("Transformer Anatomy")
    shot(page, "start_try_attention")

    # Chapter 5: Decoding, with the unicorn prompt and beam search loaded, not run (generation is not cheap).
    _tab(page, "Start").click()
    page.locator("#start-try-5").click()
    expect(_tab(page, "Decoding")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#decoding-prompt textarea")).to_have_value(course.UNICORNS)
    expect(page.locator("#decoding-strategy input[value=beam]")).to_be_checked()
    expect(page.locator("#decoding-beams input[type=number]")).to_have_value("5")
    expect(page.locator("#decoding-text textarea")).to_have_value("")
    shot(page, "start_try_decoding")

    # Chapter 4: NER in Pipelines, on a news sentence, found by the model trained here (run at once).
    _tab(page, "Start").click()
    page.locator("#start-try-4").click()
    expect(page.locator("#pl-ner-tab textarea:not(.tlab-ch-answer)").first).to_have_value(NEWS, timeout=60_000)
    expect(page.locator("#pl-ner-highlight")).to_contain_text("Angela Merkel", timeout=120_000)
    shot(page, "start_try_ner")

    # Chapter 2: Tokenizers, run at once.
    _tab(page, "Start").click()
    page.locator("#start-try-2").click()
    expect(page.locator("#tok-text textarea")).to_have_value("Tokenizing text is a core task of NLP.")
    expect(page.locator("#tok-enc")).to_contain_text("token", timeout=60_000)


def _every_tab_names_its_chapter(page):
    import app

    for title, _, key, _ in app.TABS:
        _tab(page, title).click()
        header = page.locator(f"#{key}-chapter")
        expect(header).to_be_visible()
        expect(header).to_contain_text("Book: ch.")
        for c in course.chapters_for(key):
            expect(header.get_by_role("link").filter(has_text="notebook").nth(
                course.chapters_for(key).index(c))).to_have_attribute("href", c.notebook_url)


def test_the_start_page_walked_from_a_hostile_address_to_every_tab(page, app_url, client):
    page.goto(app_url + HOSTILE)
    expect(_tab(page, "Start")).to_have_attribute("aria-selected", "true", timeout=60_000)  # a busy box loads slowly
    _chapter_map(page)
    _try_buttons(page)
    _every_tab_names_its_chapter(page)
    _first_hour(page, client)
    _transformer_picture(page)
    assert page.evaluate("window.__pwned") is None
    assert not page.blocked_requests, page.blocked_requests
