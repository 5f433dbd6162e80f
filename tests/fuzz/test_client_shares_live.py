"""One stranger cannot lock everyone else out: shares per client, not per session.

Two clients behind a proxy the app is told to trust (TLAB_TRUST_FORWARDED=1), at different forwarded
addresses, over raw HTTP. Client A opens 20 sessions; it cannot keep client B from training an NER
model or from a place in the long lane, and its own extra sessions are refused with a readable message
that names the share. The training memory is 400 MB here, so that without shares A's sessions would
fill it (about 90 MB a model: four of them) and B would be refused.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from tests.api_cases import CASES
from tests.conftest import live_settings
from tests.fuzz.raw import UNREADABLE, read_stream
from concurrent.futures import ThreadPoolExecutor

A, B = "203.0.113.10", "198.51.100.20"
LONG_DECODE = ["Once upon a time", {"strategy": "beam", "num_beams": 4, "max_new_tokens": 32}]


UPLOAD_CAP_MB, CLIENT_MB = 64, 32


@pytest.fixture(scope="module")
def uploads(public_app):
    return public_app.uploads


@pytest.fixture(scope="module")
def url(public_app):
    """The tier's public app (its client share 0.25, public mode's), with this module's limits set live
    (tests/conftest.py live_settings): a trusted proxy, 400 MB of trained models, the upload caps."""
    with live_settings(public_app.url, TLAB_TRUST_FORWARDED=1, TLAB_TRAIN_SESSION_MB=400,
                       TLAB_UPLOAD_FOLDER_MB=UPLOAD_CAP_MB, TLAB_UPLOAD_CLIENT_MB=CLIENT_MB) as u:
        yield u


def _post(url: str, api: str, data: list, session: str, address: str) -> tuple[int, dict | str]:
    """Join the queue from `address` (X-Forwarded-For) -> (HTTP status, body)."""
    req = urllib.request.Request(f"{url}gradio_api/call/{api.strip('/')}",
                                 data=json.dumps({"data": data, "session_hash": session}).encode(),
                                 headers={"Content-Type": "application/json", "X-Forwarded-For": address})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _result(url: str, api: str, event_id: str) -> tuple[str, object]:
    with urllib.request.urlopen(f"{url}gradio_api/call/{api.strip('/')}/{event_id}", timeout=600) as resp:
        return read_stream(resp.read().decode("utf-8", "replace"))


def _call(url, api, data, session, address):
    status, body = _post(url, api, data, session, address)
    assert status == 200, body
    return _result(url, api, body["event_id"])


def test_a_client_with_20_sessions_cannot_keep_another_from_training(url):
    sessions = [uuid.uuid4().hex for _ in range(20)]
    event, out = _call(url, "/train_ner", list(CASES["/train_ner"]), sessions[0], A)
    assert event == "complete", out  # A's first model: its share
    refusals = []
    for s in sessions[1:]:
        event, message = _call(url, "/train_ner", list(CASES["/train_ner"]), s, A)
        assert event == "error", message
        refusals.append(str(message))
    assert all("Your address already holds 1 trained model" in m and "share" in m and "frees up in" in m
               and not UNREADABLE.search(m) for m in refusals), refusals[0]
    event, out = _call(url, "/train_ner", list(CASES["/train_ner"]), uuid.uuid4().hex, B)
    assert event == "complete", out  # B trains, whatever A holds
    event, out = _call(url, "/predict_ner", ["Angela Merkel visited Paris."], sessions[0], A)
    assert event == "complete", out  # and A's own model still answers


def test_a_client_with_20_sessions_cannot_keep_another_from_a_long_lane_place(url):
    share = 2  # TLAB_CLIENT_SHARE 0.25 of (6 waiting + 2 running) places
    admitted, refused, ended, endings = [], [], [], []
    lock = threading.Lock()

    def follow(event_id):  # read an admitted job's stream; note when its answer arrived
        outcome = _result(url, "/decode", event_id)[0]
        with lock:
            ended.append(outcome)

    for _ in range(20):  # A asks as fast as it can, each time from a new session
        status, body = _post(url, "/decode", LONG_DECODE, uuid.uuid4().hex, A)
        if status == 200:
            # A's jobs in the lane when this one was let in: those admitted before it, less those answered.
            # The server drops a job from its books as it sends the answer, a moment before this process
            # has read it: give an answer that is on its way a second to arrive.
            deadline = time.monotonic() + 1.0
            while len(admitted) - len(ended) >= share and time.monotonic() < deadline:
                time.sleep(0.02)
            with lock:
                assert len(admitted) - len(ended) < share, (len(admitted), list(ended))
            admitted.append(body)
            endings.append(threading.Thread(target=follow, args=(body["event_id"],), daemon=True))
            endings[-1].start()
        else:
            refused.append(body)
    assert admitted and refused, (admitted, refused)
    assert all("Your address already has" in str(r) and "long lane's places" in str(r)
               and not UNREADABLE.search(str(r)) for r in refused), refused[0]
    status, body = _post(url, "/decode", LONG_DECODE, uuid.uuid4().hex, B)
    assert status == 200, body  # B gets a place
    assert _result(url, "/decode", body["event_id"])[0] == "complete"
    for t in endings:  # A's own jobs run too
        t.join(timeout=600)
    assert ended == ["complete"] * len(admitted), ended


def _upload(url: str, nbytes: int, address: str, name: str = "burst.bin") -> tuple[int, str]:
    body = (b'--B\r\nContent-Disposition: form-data; name="files"; filename="' + name.encode() + b'"\r\n'
            b"Content-Type: application/octet-stream\r\n\r\n" + os.urandom(nbytes) + b"\r\n--B--\r\n")
    req = urllib.request.Request(url + "gradio_api/upload", data=body, method="POST",
                                 headers={"Content-Type": "multipart/form-data; boundary=B", "X-Forwarded-For": address})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except (ConnectionError, urllib.error.URLError) as exc:  # a refusal that closed before the body was sent
        return 413, str(exc)


def _folder_mb(folder) -> float:
    total = 0
    for root, _dirs, names in os.walk(folder):
        for n in names:
            try:
                total += os.stat(os.path.join(root, n)).st_size
            except OSError:
                pass
    return total / 2**20


def test_an_upload_burst_never_takes_the_folder_past_its_cap(url, uploads):
    status, body = _upload(url, (CLIENT_MB + 1) * 2**20, "192.0.2.99", "too-big.bin")
    assert status == 413 and "each address may upload at most" in body and not UNREADABLE.search(body)
    assert not any("too-big" in n for _, _, names in os.walk(uploads) for n in names)  # refused before stored
    peak, done = [0.0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _folder_mb(uploads))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    addresses = [f"192.0.2.{i}" for i in range(1, 9)]  # 8 clients x 3 files of 5 MB: 120 MB into a 64 MB folder
    try:
        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(lambda a: _upload(url, 5 * 2**20, a), addresses * 3))
    finally:
        done.set()
        sampler.join()
    stored = [a for a in answers if a[0] == 200]
    refused = [a for a in answers if a[0] != 200]
    assert stored and refused, answers
    assert all(code == 413 and ("upload space is full" in text or "Errno" in text) for code, text in refused), refused
    assert peak[0] <= UPLOAD_CAP_MB, f"the folder reached {peak[0]:.1f} MB (cap {UPLOAD_CAP_MB} MB)"
    assert _upload(url, 1000, "198.51.100.200")[0] in (200, 413)  # the server still answers
