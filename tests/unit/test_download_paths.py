"""The stores' download folder sits under the working directory as a Gradio static path, so a handler
replies with a path relative to it (no absolute server path in a reply)."""

from __future__ import annotations

import os

from gradio.data_classes import _StaticFiles

from components.shell import session_memory as sm


def test_downloads_live_under_the_working_directory_and_are_given_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = sm.download_root()
    assert root == os.path.join(str(tmp_path), ".cache", "tlab-downloads") and os.path.isdir(root)
    assert any(str(p) == os.path.realpath(root) for p in _StaticFiles.all_paths)  # served in place, not copied
    zip_path = os.path.join(root, "tlab-train-x", "model.zip")
    assert sm.served(zip_path) == os.path.join(".cache", "tlab-downloads", "tlab-train-x", "model.zip")
    assert sm.served("/elsewhere/model.zip") == "/elsewhere/model.zip"  # not under it: as it was


def test_an_unwritable_working_directory_keeps_the_upload_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".cache").write_text("a file where the folder would go")
    assert sm.download_root() == sm.upload_folder()


def test_the_owner_check_reads_a_relative_link_as_the_server_resolves_it(tmp_path, monkeypatch):
    import tempfile

    from backend.runtime import clients

    monkeypatch.chdir(tmp_path)
    folder = tempfile.mkdtemp(prefix="tlab-train-", dir=sm.download_root())
    clients.bind("sess-a", "203.0.113.7")
    clients.own(folder, "sess-a")
    link = sm.served(os.path.join(folder, "model.zip"))  # what the reply's /gradio_api/file= URL carries
    assert not link.startswith("/") and clients.owner_of(link) == "203.0.113.7"
    clients.forget("sess-a")
