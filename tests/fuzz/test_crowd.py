"""A crowd of strangers against the public app, over raw HTTP as a hostile client sends it:
- 66 fresh sessions searching cannot evict a visitor's private index (counted per session, they would flush all 64);
- fresh sessions asking for a trained model get a readable message and drop nobody's;
- a visitor gets one long job at a time: a second is refused at once, readably;
- the upload route takes a few files per request, not 1,000;
- a zero-shot label that is a link is plain text in the plot.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

from components.shell.session_memory import UPLOAD_MAX_FILES
from tests.fuzz.raw import UNREADABLE, call

PASTE = "\n\n".join(f"Megatron note {i}: the decepticon leader wants his figure back, number {i}."
                    for i in range(12))
BUILD_PASTE = ["paste", None, PASTE, None, "", False, 120, 30, "flat", 32, 40, 16, 100, 8, 16, 8, "minilm"]


def _join(url: str, api: str, data: list, session: str) -> tuple[int, str]:
    """POST /gradio_api/call/<api> only (the job joins the queue) -> (HTTP status, body)."""
    req = urllib.request.Request(f"{url}gradio_api/call/{api.strip('/')}",
                                 data=json.dumps({"data": data, "session_hash": session}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_66_fresh_searchers_leave_a_private_index_in_place(public_url):
    owner = uuid.uuid4().hex
    assert call(public_url, "/build_index", BUILD_PASTE, session_hash=owner)[0] == "complete"

    def stranger(_):
        return call(public_url, "/search", ["decepticon", 1], session_hash=uuid.uuid4().hex)[0]

    with ThreadPoolExecutor(4) as pool:
        assert set(pool.map(stranger, range(66))) == {"complete"}
    event, out = call(public_url, "/search", ["decepticon leader", 1], session_hash=owner)
    assert event == "complete"
    assert "Megatron note" in json.dumps(out)  # its own pasted corpus, not the glossary


def test_fresh_sessions_asking_for_a_trained_model_get_a_readable_answer(public_url):
    for _ in range(34):
        event, message = call(public_url, "/predict_trained", ["some text", ""], session_hash=uuid.uuid4().hex)
        assert event == "error" and "No trained model in this session yet" in message
        assert not UNREADABLE.search(message)


def test_one_long_job_per_visitor(public_url):
    me = uuid.uuid4().hex
    long_decode = ["Once upon a time", {"strategy": "beam", "num_beams": 4, "max_new_tokens": 64}]
    first = _join(public_url, "/decode", long_decode, me)
    second = _join(public_url, "/build_index", BUILD_PASTE, me)
    assert first[0] == 200
    assert second[0] == 422 and "already have a long job" in second[1] and not UNREADABLE.search(second[1])
    other = _join(public_url, "/tokenize", ["short work still runs", True], me)
    assert other[0] == 200  # short work is never refused for a long job
    urllib.request.urlopen(f"{public_url}gradio_api/call/decode/{json.loads(first[1])['event_id']}",
                           timeout=300).read()  # let it finish: the next test starts clean


def _upload(url: str, n: int) -> int:
    body = b"".join(b'--B\r\nContent-Disposition: form-data; name="files"; filename="f%d.txt"\r\n'
                    b"Content-Type: text/plain\r\n\r\nhello\r\n" % i for i in range(n)) + b"--B--\r\n"
    req = urllib.request.Request(url + "gradio_api/upload", data=body, method="POST",
                                 headers={"Content-Type": "multipart/form-data; boundary=B"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_upload_route_refuses_many_files_per_request(public_url):
    assert _upload(public_url, 1) == 200
    assert _upload(public_url, UPLOAD_MAX_FILES) == 200
    assert _upload(public_url, 1000) == 400


def test_a_link_in_a_zero_shot_label_is_text_in_the_plot(public_url):
    label = '<a href="https://evil.example/x">click</a>'
    event, out = call(public_url, "/zero_shot", ["I want a refund for this broken figure.",
                                                 f"refund, {label}", False, "This text is about {}.", False, ""],
                      session_hash=uuid.uuid4().hex)
    assert event == "complete"
    plots = [o for o in out if isinstance(o, dict) and o.get("type") == "plotly"]
    assert plots, "the zero-shot result has a plot"
    text = json.dumps(plots)
    assert "evil.example" in text and "<a href" not in text and "&lt;a href" in text
