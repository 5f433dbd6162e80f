"""A download's folder is made after making room (backend/runtime/downloads.py): one zip per address and
kind, the folder's cap checked at the door."""

from __future__ import annotations

import os

import pytest

from backend.runtime import clients, downloads
from backend.runtime.errors import InputError


def _zip(folder, mb):
    (folder / "model.zip").write_bytes(b"\0" * int(mb * 2**20))


def test_a_burst_from_one_address_keeps_one_zip(tmp_path, monkeypatch):
    monkeypatch.setenv("TLAB_DOWNLOAD_FOLDER_MB", "50")
    with clients.serving("203.0.113.7"):
        for _ in range(30):
            _zip(downloads.new_folder(tmp_path, "compress", 10 * 2**20), 10)
    assert len(list(tmp_path.glob("tlab-compress-*"))) == 1
    assert downloads.held_bytes(tmp_path) == 10 * 2**20


def test_the_cap_refuses_at_the_door(tmp_path, monkeypatch):
    monkeypatch.setenv("TLAB_DOWNLOAD_FOLDER_MB", "25")
    for address in ("192.0.2.1", "192.0.2.2"):
        with clients.serving(address):
            _zip(downloads.new_folder(tmp_path, "compress", 10 * 2**20), 10)
    with clients.serving("192.0.2.3"), pytest.raises(InputError, match=r"download folder is full \(20 MB of its 25 MB"):
        downloads.new_folder(tmp_path, "compress", 10 * 2**20)


def test_the_folder_is_served_to_its_address_only(tmp_path):
    with clients.serving("203.0.113.7"):
        folder = downloads.new_folder(tmp_path, "compress")
    assert clients.owner_of(str(folder / "model.zip")) == "203.0.113.7"
    assert "203.0.113.7" not in folder.name


def test_a_kind_kept_by_bytes_keeps_earlier_downloads_until_they_no_longer_fit(tmp_path):
    """Notebooks: each run's stays (a tab's Download after runs in other tabs), the oldest going first once the
    address's together would pass `keep_bytes`; another address's are never touched."""
    with clients.serving("198.51.100.9"):
        stranger = downloads.new_folder(tmp_path, "notebook", 2**20, keep_bytes=3 * 2**20)
        _zip(stranger, 1)
    made = []
    with clients.serving("203.0.113.7"):
        for i in range(3):
            made.append(downloads.new_folder(tmp_path, "notebook", 2**20, keep_bytes=3 * 2**20))
            _zip(made[-1], 1)
            os.utime(made[-1], (1000 + i, 1000 + i))  # an order the clock cannot blur
        assert all(f.exists() for f in made)
        made.append(downloads.new_folder(tmp_path, "notebook", 2**20, keep_bytes=3 * 2**20))
    assert [f.exists() for f in made] == [False, True, True, True]  # the oldest went, the rest still download
    assert stranger.exists() and clients.owner_of(str(made[-1] / "model.zip")) == "203.0.113.7"
