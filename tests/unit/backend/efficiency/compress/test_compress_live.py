"""A live chapter 8 run belongs to the address that made it (backend/efficiency/compress/live.py): nobody else can
name it, read it or push it out of the cache."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from backend.efficiency.compress import live
from backend.runtime import clients, config
from backend.runtime.errors import InputError

SETTINGS = SimpleNamespace(temperatures=(2.0,), alphas=(0.5,), layers=(0, 5), sparsities=(0.5,), epochs=3)


@pytest.fixture()
def root(tmp_path):
    return tmp_path / "compress-live"


def _run(root, client, age_s=0.0):
    with clients.serving(client):
        folder = root / live.run_id(SETTINGS, root) if age_s == 0 else root / f"{client}-{age_s}"
        live.claim(folder)
    t = time.time() - age_s
    os.utime(folder, (t, t))
    return folder


def test_the_same_settings_name_a_different_run_for_each_address(root):
    with clients.serving("203.0.113.7"):
        mine, again = live.run_id(SETTINGS, root), live.run_id(SETTINGS, root)
    with clients.serving("198.51.100.9"):
        theirs = live.run_id(SETTINGS, root)
    assert mine == again and mine != theirs and len(mine) == 16


def test_another_address_cannot_read_a_run(root):
    folder = _run(root, "203.0.113.7")
    with clients.serving("203.0.113.7"):
        assert live.owned(folder)
    with clients.serving("198.51.100.9"):
        assert not live.owned(folder)


def test_the_run_folder_of_another_address_answers_as_gone(root, monkeypatch, tmp_path):
    from backend.efficiency.compress import api

    monkeypatch.setattr(api, "default_folder", lambda: tmp_path / "default")
    monkeypatch.setenv("TLAB_CACHE_DIR", str(tmp_path))
    folder = _run(root, "203.0.113.7")
    (folder / "state.json").write_text("{}")
    monkeypatch.setattr(api.compress_run, "STATE_FILE", "state.json")
    with clients.serving("203.0.113.7"):
        assert api.run_folder(folder.name)[1] == folder
    with clients.serving("198.51.100.9"), pytest.raises(InputError, match="That run is gone"):
        api.run_folder(folder.name)


def test_cheap_runs_of_a_stranger_do_not_evict_a_recent_run(root):
    victim = _run(root, "203.0.113.7", age_s=60)
    for i in range(live.LIVE_KEEP + 2):  # the stranger's own runs make room among themselves
        with clients.serving("198.51.100.9"):
            keep = root / f"stranger-{i}"
            live.make_room(root, keep)
            live.claim(keep)
    assert victim.exists()
    with clients.serving("198.51.100.9"):
        assert sum(1 for p in root.iterdir() if p.is_dir() and live.owned(p)) == live.PER_CLIENT


def test_a_full_cache_of_recent_runs_refuses_with_when_to_come_back(root):
    for i in range(live.LIVE_KEEP):
        _run(root, f"192.0.2.{i}", age_s=30)
    with clients.serving("198.51.100.9"), pytest.raises(InputError, match=r"every place is held.*about \d+ minute"):
        live.make_room(root, root / "new")


def test_an_unused_run_of_another_address_makes_room(root):
    old = [_run(root, f"192.0.2.{i}", age_s=config.get_settings().keep_items_s + 10 * i) for i in range(live.LIVE_KEEP)]
    with clients.serving("198.51.100.9"):
        gone = live.make_room(root, root / "new")
    assert gone == [old[-1]] and not old[-1].exists()  # the one unused longest
