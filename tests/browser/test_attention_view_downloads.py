"""Keep what you see: the bertviz views download as standalone HTML files that draw with no
network at all (the vendored JS and the attention data are inside the file)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.conftest import ARTIFACTS


def test_the_head_and_model_views_download_as_files_that_draw_offline(page, browser, app_url):
    page.goto(app_url + "?tab=attention&text=time+flies+like+an+arrow&text_b=&role=encoder")
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
