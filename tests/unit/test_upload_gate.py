"""Uploads bounded at the door (per request, per client, the folder's cap, decided before a
byte is stored) and the stores' download zips bounded too."""

from __future__ import annotations

import asyncio
import os

import pytest

from components.shell import session_memory, upload_gate
from components.shell.upload_gate import UploadBook, UploadGate

pytestmark = pytest.mark.unit
MB = 2**20


@pytest.fixture
def caps(monkeypatch):
    monkeypatch.setenv("TLAB_UPLOAD_FOLDER_MB", "64")
    monkeypatch.setenv("TLAB_UPLOAD_CLIENT_MB", "32")


def test_a_client_gets_its_share_of_uploads_per_window(caps, tmp_path):
    book = UploadBook(str(tmp_path), window_s=120)
    assert book.reserve("A", 20 * MB, now=0.0) is None
    why = book.reserve("A", 20 * MB, now=10.0)
    assert "Your address uploaded 20 MB in the last 120 s" in why and "32 MB per 120 s" in why and "110 s" in why
    assert book.reserve("B", 20 * MB, now=10.0) is None  # another address
    book.landed(20 * MB)
    book.landed(20 * MB)
    assert book.reserve("A", 20 * MB, now=121.0) is None  # the window moved on


def test_old_files_make_room_before_an_upload_is_refused(caps, tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "f.bin").write_bytes(b"x" * (60 * MB))
    os.utime(tmp_path / "old" / "f.bin", (1, 1))  # long past its grace
    book = UploadBook(str(tmp_path), window_s=120)
    assert book.reserve("A", 20 * MB) is None  # 60 + 20 > 64: the old file went first
    assert not (tmp_path / "old" / "f.bin").exists()


def test_the_folder_never_takes_more_than_its_cap(caps, tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "f.bin").write_bytes(b"x" * (40 * MB))  # young: within its grace, never deleted
    (tmp_path / "tlab-train-x").mkdir()  # download zips have a cap of their own: not counted here
    (tmp_path / "tlab-train-x" / "m.zip").write_bytes(b"z" * (50 * MB))
    book = UploadBook(str(tmp_path), window_s=120)
    assert book.reserve("A", 20 * MB, now=0.0) is None  # 40 + 20 <= 64
    why = book.reserve("B", 10 * MB, now=0.5)  # 40 + 20 arriving + 10 > 64
    assert "upload space is full (60 MB of 64 MB)" in why


def test_one_request_takes_a_few_files_of_the_file_limit():
    why = UploadBook().reserve("A", upload_gate.request_cap() + 1)
    assert f"at most {session_memory.UPLOAD_MAX_FILES} files of {upload_gate.FILE_MAX_MB} MB" in why


def _asgi(gate, headers, body=b"x"):
    sent, reached = [], []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/gradio_api/upload", "client": ("10.0.0.1", 5000),
             "headers": [(k.encode(), v.encode()) for k, v in headers.items()]}
    asyncio.run(gate(scope, receive, send))
    return sent, reached


def test_the_gate_refuses_before_gradio_reads_a_byte(caps, tmp_path):
    reached = []

    async def app(scope, receive, send):
        reached.append(await receive())

    gate = UploadGate(app, UploadBook(str(tmp_path)))
    sent, _ = _asgi(gate, {"content-length": str(100 * MB)})
    assert sent[0]["status"] == 413 and b"each address may upload at most 32 MB" in sent[1]["body"] and reached == []
    sent, _ = _asgi(gate, {})
    assert sent[0]["status"] == 411 and reached == []
    sent, _ = _asgi(gate, {"content-length": "1"})
    assert sent == [] and reached and reached[0]["body"] == b"x"  # admitted: Gradio reads it
    assert gate.book.arriving == 0  # its reservation ended with the request


def test_download_zips_are_trimmed_oldest_first_sparing_young_ones(tmp_path):
    now = 1_000_000.0
    paths = []
    for i, age in enumerate((900, 600, 10)):
        folder = tmp_path / f"tlab-train-{i}"
        folder.mkdir()
        path = folder / "model.zip"
        path.write_bytes(b"z" * MB)
        os.utime(path, (now - age, now - age))
        paths.append(path)
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "u.txt").write_bytes(b"u" * (5 * MB))  # an upload: not a download
    gone = session_memory.trim_downloads(str(tmp_path), max_bytes=MB, grace_s=120, now=now)
    assert gone == [str(paths[0]), str(paths[1])] and paths[2].exists()
    assert (tmp_path / "upload" / "u.txt").exists()
    assert session_memory.trim_downloads(str(tmp_path), max_bytes=0, grace_s=120, now=now) == []  # young: spared


def test_download_zips_go_by_age_whatever_the_folder_holds(tmp_path):
    now = 1_000_000.0
    paths = []
    for i, age in enumerate((session_memory.DOWNLOAD_MAX_AGE_S + 5, 300, 10)):
        folder = tmp_path / f"tlab-ner-{i}"
        folder.mkdir()
        path = folder / "model.zip"
        path.write_bytes(b"z" * MB)
        os.utime(path, (now - age, now - age))
        paths.append(path)
    gone = session_memory.trim_downloads(str(tmp_path), max_bytes=100 * MB, grace_s=120, now=now)
    assert gone == [str(paths[0])] and paths[1].exists() and paths[2].exists()  # far under the cap, gone by age


def test_a_download_is_served_only_to_the_client_that_made_it(tmp_path):
    from backend.runtime import clients

    clients.clear()
    clients.bind("owner-session", "10.0.0.1")
    folder = tmp_path / "tlab-train-x"
    folder.mkdir()
    clients.own(folder, "owner-session")
    reached = []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    def get(path, host):
        sent = []

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": path, "client": (host, 1), "headers": []}
        asyncio.run(UploadGate(app)(scope, None, send))
        return sent

    mine = f"/gradio_api/file={folder}/model.zip"
    assert get(mine, "10.0.0.1") == [] and reached == [mine]  # the owner downloads it
    sent = get(mine, "10.0.0.2")
    assert sent[0]["status"] == 404 and b"only from the address that made it" in sent[1]["body"] and len(reached) == 1
    assert get(f"/gradio_api/file={tmp_path}/other.txt", "10.0.0.2") == []  # not a download folder: Gradio decides
    clients.clear()
