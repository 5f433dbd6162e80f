"""Public mode and private corpora, through the API of an app started for the purpose:
- public mode (TLAB_PUBLIC=1) refuses `/etc`, `~` and a Hub id off the allowlist with one
  and the same message, so a caller learns nothing about the server's files;
- a private corpus leaves no file behind: not in the search cache (it never touches the disk),
  not in the upload folder (deleted once read), and its session is dropped when the client
  disconnects; a second user uploading the same content gets no cache hit.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

OFF_LIST = ["/etc", "~", "/nonexistent/dir", "some-user/not-on-the-allowlist", "/usr/lib"]


def test_public_mode_refuses_paths_and_hub_ids_alike(public_url):
    client = Client(public_url, verbose=False)
    messages = set()
    for value in OFF_LIST:
        with pytest.raises(Exception) as info:
            client.predict(text="A fine day.", model_box=value, api_name="/classify")
        messages.add(str(info.value))
    assert len(messages) == 1, messages
    (message,) = messages
    assert "not available on this public app" in message and "/etc" not in message and "Traceback" not in message
    out = client.predict(text="A fine day.", api_name="/classify")[-1]  # no model box: the profile's model
    assert out["model"]["checkpoint"]
    client.close()


@pytest.fixture(scope="module")
def private_app(private_cache_app):
    """The session's private app of its own (tests/conftest.py private_cache_app: its own cache, with a
    crashed write's stale file in it at the start, and its own upload folder). In lane order the cold
    first call (tests/e2e/test_pipelines_timing_api.py) has used it first: its cache then holds that
    call's converted model, and what is asserted here is that a private corpus adds nothing to it."""
    app = private_cache_app
    yield app.url, app.cache, app.uploads, app.stale


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_a_private_corpus_leaves_no_file_and_no_cache_hit(private_app, tmp_path):
    url, cache, uploads, stale = private_app
    assert not stale.exists(), "a crashed write's .tmp- file survived the start-up"
    secret = tmp_path / "secret.txt"
    secret.write_text("Project Nightjar ships in March.\nThe vault code is 4711.\nOnly Ada knows the plan.\n")
    before = set(_files(cache))
    alice = Client(url, verbose=False)
    _, stats, _ = alice.predict(choice="upload", file=handle_file(str(secret)), api_name="/build_index")
    assert stats["count"] == 3 and stats["embeddings_from_cache"] is False and stats["shared"] is False
    res = alice.predict(query="vault code", k=1, api_name="/search")[2]
    assert "4711" in res["results"][0]["text"]
    assert set(_files(cache)) == before, "a private corpus was written to the search cache"
    assert not [p for p in _files(uploads) if p.name == "secret.txt"], "the upload outlived its parsing"
    # Rebuilding in the same session works without the deleted upload (its bytes stay in the session).
    _, again, _ = alice.predict(choice="upload", file=handle_file(str(secret)), index_type="hnsw",
                                api_name="/build_index")
    assert again["count"] == 3
    bob = Client(url, verbose=False)
    _, stats_b, _ = bob.predict(choice="upload", file=handle_file(str(secret)), api_name="/build_index")
    assert stats_b["embeddings_from_cache"] is False and stats_b["index_from_cache"] is False
    alice.close()
    bob.close()
    deadline = time.time() + 30
    while time.time() < deadline and _files(uploads):
        time.sleep(0.5)
    assert set(_files(cache)) == before
    assert not [p for p in _files(uploads) if p.name == "secret.txt"]
    log = (Path(__file__).resolve().parents[1] / "artifacts" / "app-private.log").read_text()
    assert "Traceback" not in log


def test_input_errors_are_one_log_line_each(private_app):
    url, *_ = private_app
    client = Client(url, verbose=False)
    for k in ("abc", -3):
        with pytest.raises(Exception):
            client.predict(question="anything?", k=k, api_name="/ask_corpus")
    client.close()
    log = (Path(__file__).resolve().parents[1] / "artifacts" / "app-private.log").read_text()
    lines = [line for line in log.splitlines() if "input error in ask" in line]
    assert len(lines) == 2, log[-2000:]
    assert "Traceback" not in log
