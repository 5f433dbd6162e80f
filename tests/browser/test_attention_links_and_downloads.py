"""Keep what you see, on the Attention tab's own page (tab_url): a link restores the text, layer and head
and draws them; the bertviz views download as standalone HTML files that draw with no network at all
(the vendored JS and the attention data are inside the file)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.helpers.browser import shot

from tests.helpers.app import ARTIFACTS
TAB = "attention"  # its page holds this tab alone (tab_url, tests/conftest.py)


def test_the_head_and_model_views_download_as_files_that_draw_offline(page, browser, tab_url):
    page.goto(tab_url + "?tab=attention&text=time+flies+like+an+arrow&text_b=&role=encoder")
    page.frame_locator("#attention-head-view iframe").locator("svg line").first.wait_for(
        state="attached", timeout=120_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    saved = {}
    for view, tab in (("head", "Head view"), ("model", "Model view")):
        page.locator("#attention-tab").get_by_role("tab", name=tab).click()
        with page.expect_download() as info:
            page.locator(f"#attention-{view}-view-download").click()
        download = info.value
        assert download.suggested_filename == f"attention-{view}-view.html"
        path = ARTIFACTS / f"course_attention_{view}_view.html"
        download.save_as(str(path))
        saved[view] = path
        assert path.stat().st_size > 10_000

    offline = browser.new_context(offline=True)
    requests: list[str] = []
    offline.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
                  if not route.request.url.startswith(("file:", "data:", "blob:", "about:")) else route.continue_())
    try:
        viewer = offline.new_page()
        viewer.goto(saved["head"].as_uri())
        viewer.locator("svg line").first.wait_for(state="attached", timeout=30_000)
        texts = viewer.locator("svg text").all_text_contents()
        assert "flies" in texts and "arrow" in texts, texts
        viewer.screenshot(path=str(ARTIFACTS / "course_attention_head_view_offline.png"))
        viewer.goto(saved["model"].as_uri())
        viewer.locator("svg line").first.wait_for(state="attached", timeout=30_000)
        assert viewer.locator("svg line").count() > 1000  # 6 layers x 12 heads of thumbnails
        viewer.screenshot(path=str(ARTIFACTS / "course_attention_model_view_offline.png"))
        assert requests == [], requests
    finally:
        offline.close()


def test_a_link_to_attention_restores_the_layer_and_head_and_draws_them(page, tab_url):
    page.goto(tab_url + "?tab=attention&text=The+cat+sat+on+the+mat&text_b=&role=encoder&layer=3&head=2")
    expect(page.locator("#attention-tab textarea:not(.tlab-ch-answer)").first).to_have_value("The cat sat on the mat", timeout=60_000)
    expect(page.locator("#attention-badge")).to_contain_text("8 tokens", timeout=120_000)
    page.locator("#attention-tab").get_by_role("tab", name="Heatmap").click()
    expect(page.locator("#attention-heatmap")).to_contain_text("layer 3, head 2", timeout=60_000)
    href = page.evaluate("location.href")
    assert "layer=3" in href and "head=2" in href
    shot(page, "attention_link_heatmap")
