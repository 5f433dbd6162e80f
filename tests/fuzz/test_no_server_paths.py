"""No absolute server path in a reply: Gradio's file payload carries the path of every download (`path`,
and the `/gradio_api/file=<path>` URL), so the stores write their zips under
the working directory's `.cache/tlab-downloads` (a Gradio static path: served in place) and the
handlers reply with the path relative to it (components/shell/session_memory.download_root), so
the reply names neither /tmp nor the home nor the repository, and the link still downloads the zip.
"""

from __future__ import annotations

import json
import tempfile
import urllib.request
import uuid
from pathlib import Path

from tests.api_cases import CASES
from tests.fuzz.raw import call
from tests.fuzz.test_session_memory_soak import _upload_sentences

ROOT = Path(__file__).resolve().parents[2]
SERVER_PATHS = sorted({"/tmp", tempfile.gettempdir(), str(Path.home()), str(ROOT), str(ROOT.resolve())})
# A model first where a download needs one (the smallest runs the API takes), then the download.
DOWNLOADS = [
    ("/train", ("sentiment", None, "", "", ["probe"], 1, 16, 5, 1e-4, 8, False, False, 0),
     "/download_trained", ("probe",)),
    ("/train_ner", None, "/download_ner", ()),  # on a 10-sentence upload (the fewest; None: filled in below)
    ("/train_gpt", CASES["/train_gpt"], "/download_gpt", ()),
    ("/train_seq2seq", CASES["/train_seq2seq"], "/download_seq2seq", ()),
    (None, None, "/compress_download", CASES["/compress_download"]),  # the model built at set-up, if any
]


def _files(value) -> list[dict]:
    """Every file payload in a reply's outputs."""
    if isinstance(value, dict):
        found = [value] if value.get("meta", {}).get("_type") == "gradio.FileData" or "url" in value else []
        return found + [f for v in value.values() for f in _files(v)]
    if isinstance(value, list):
        return [f for v in value for f in _files(v)]
    return []


def test_no_download_reply_names_a_server_path_and_each_link_still_downloads(public_url):
    ner_file = _upload_sentences(public_url, 10)
    served = 0
    for train, train_args, download, args in DOWNLOADS:
        session = uuid.uuid4().hex
        if train is not None:
            train_args = train_args if train_args is not None else ["upload", ner_file, 1, 0, None, 16, True, 0]
            event, out = call(public_url, train, list(train_args), session_hash=session)
            assert event == "complete", f"{train}: {event} {str(out)[:300]}"
        event, out = call(public_url, download, list(args), session_hash=session)
        text = json.dumps(out)
        for path in SERVER_PATHS:
            assert path not in text, f"{download}'s reply names {path}: {text[:400]}"
        if download == "/compress_download" and event == "error":
            continue  # no compressed model built on this machine: the refusal is checked above
        assert event == "complete", f"{download}: {event} {text[:300]}"
        files = _files(out)
        assert files and all(not f["path"].startswith("/") for f in files), files
        with urllib.request.urlopen(files[0]["url"], timeout=60) as resp:
            assert resp.status == 200 and resp.read(2) == b"PK", files[0]  # a zip, served from the relative path
        served += 1
    assert served >= 4
