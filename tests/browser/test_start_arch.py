"""The Start tab's transformer picture in a browser (issue #34): each part of chapter 3's encoder and
decoder opens, in this page, the tab that computes it, with the part's parameters (role, layer, spec)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import shot


def test_each_part_of_the_transformer_picture_opens_its_tab(page, app_url):
    page.goto(app_url)
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
