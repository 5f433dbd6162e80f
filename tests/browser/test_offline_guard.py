"""The browser tier's own guard: every page the tier opens refuses a request that leaves localhost and
lists it in `page.blocked_requests` (the offline checks of every tab read that list), and lets the app's
own requests through."""

from __future__ import annotations

LOAD_AN_IMAGE = """async (src) => {
    const img = document.createElement('img');
    img.src = src;
    document.body.appendChild(img);
    await new Promise(done => { img.onerror = done; img.onload = done; });
}"""


def test_a_request_leaving_localhost_is_refused_and_listed(page, app_url):
    page.goto(app_url + "gradio_api/info")  # a page of the app's origin, without the app's 3 s load
    page.evaluate(LOAD_AN_IMAGE, "https://example.com/tracker.png")  # as a web font, a CDN script or a beacon would
    page.evaluate(LOAD_AN_IMAGE, app_url + "favicon.ico")
    assert page.blocked_requests == ["https://example.com/tracker.png"]
    assert page.evaluate("(u) => fetch(u + 'gradio_api/info').then(r => r.status)", app_url) == 200
