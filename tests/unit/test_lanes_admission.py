"""The long lane's admission (one long job per visitor, a bounded wait), the upload route's file
count, and visitor text in plots shown as text."""

from __future__ import annotations

import types

import pytest

from components.shell import lanes as common
from components.shell.lanes import LONG_WAITING_MAX, lane_refusal
from components.decoding.handlers import _decode_api_plan, decode_api
from components.pipelines.plots import label_bars
from components.shell.endpoint import served

LONG = types.SimpleNamespace(concurrency_id="long")
SHORT = types.SimpleNamespace(concurrency_id="model")
# /decode as the tab declares it: planned, long from its settings
DECODE = types.SimpleNamespace(concurrency_id="decode", fn=served(decode_api, _decode_api_plan, shell_slot=True))
LONG_DECODE = ["a prompt", {"strategy": "beam", "num_beams": 4, "max_new_tokens": 32}]
SHORT_DECODE = ["a prompt", {"strategy": "greedy", "max_new_tokens": 8}]


def test_a_visitor_may_hold_one_long_job_and_any_short_ones():
    mine = [("me", LONG, [], True, None)]
    assert "already have a long job" in lane_refusal(mine, "me", LONG, [])
    assert "already have a long job" in lane_refusal(mine, "me", DECODE, LONG_DECODE)
    assert lane_refusal(mine, "me", SHORT, []) is None
    assert lane_refusal(mine, "me", DECODE, SHORT_DECODE) is None  # a short decode is short work
    assert lane_refusal(mine, "you", LONG, []) is None


def test_the_long_lane_wait_is_bounded_for_everyone():
    waiting = [(f"s{i}", LONG, [], False, None) for i in range(LONG_WAITING_MAX)]
    running = [("r", LONG, [], True, None)]
    assert "long-job lane is full" in lane_refusal(waiting + running, "new", LONG, [])
    assert lane_refusal(waiting[:-1] + running, "new", LONG, []) is None  # running jobs do not count
    assert lane_refusal(waiting, "new", SHORT, []) is None  # short work never waits on the long lane


def test_a_bad_decode_settings_string_is_not_long(monkeypatch):
    assert lane_refusal([("me", LONG, [], True, None)], "me", DECODE, ["p", "{not json"]) is None


def _multipart(n_files: int):
    parts = b"".join(b'--x\r\nContent-Disposition: form-data; name="files"; filename="f%d.txt"\r\n'
                     b"Content-Type: text/plain\r\n\r\nhello\r\n" % i for i in range(n_files))
    from starlette.datastructures import Headers

    return Headers({"content-type": "multipart/form-data; boundary=x"}), parts + b"--x--\r\n"


def _parse(n_files: int, tmp_path):
    import asyncio

    from gradio.route_utils import GradioMultiPartParser

    headers, body = _multipart(n_files)

    async def stream():
        yield body

    parser = GradioMultiPartParser(headers, stream(), max_files=1000, max_fields=1000,
                                   upload_dir=str(tmp_path), max_file_size=1_000_000)
    return asyncio.run(parser.parse())


def test_the_upload_route_takes_a_few_files_per_request(tmp_path):
    from gradio.route_utils import MultiPartException

    from components.shell import session_memory

    session_memory.limit_uploads(2)
    try:
        assert len(_parse(2, tmp_path).getlist("files")) == 2
        with pytest.raises(MultiPartException, match="Too many files. Maximum number of files is 2"):
            _parse(3, tmp_path)
        session_memory.limit_uploads()  # idempotent: the module's limit again, not 2 stacked on it
        with pytest.raises(MultiPartException, match=f"is {session_memory.UPLOAD_MAX_FILES}"):
            _parse(session_memory.UPLOAD_MAX_FILES + 1, tmp_path)
    finally:
        session_memory.limit_uploads()


def test_zero_shot_labels_are_text_in_the_plot_not_links():
    label = '<a href="https://evil.example">click me</a>'
    fig = label_bars([{"labels": [label, "b & c"], "scores": [0.6, 0.4], "sequence": "<b>seq</b>"}], "t")
    shown = list(fig.data[0].y) + [fig.data[0].name]
    assert all("<" not in s and ">" not in s for s in shown)
    assert "&lt;a href=\"https://evil.example\"&gt;click me&lt;/a&gt;" in shown
    assert "b &amp; c" in shown and fig.data[0].name == "&lt;b&gt;seq&lt;/b&gt;"


@pytest.mark.parametrize("lane", [common.SHORT_LANE, common.LONG_LANE, common.DECODE_LANE, common.BATCH_LANE])
def test_every_lane_has_a_limit(lane):
    assert lane["concurrency_limit"] >= 1 and lane["concurrency_id"]


def test_the_upload_folder_is_trimmed_oldest_first_sparing_young_files_and_trained_models(tmp_path):
    import os

    from components.shell.session_memory import trim_upload_folder

    now = 1_000_000.0
    paths = []
    for i, age in enumerate((900, 600, 300, 10)):  # seconds old; 1 MB each
        folder = tmp_path / f"hash{i}"
        folder.mkdir()
        path = folder / "upload.txt"
        path.write_bytes(b"x" * 1_000_000)
        os.utime(path, (now - age, now - age))
        paths.append(path)
    trained = tmp_path / "tlab-train-abc"
    trained.mkdir()
    (trained / "model.zip").write_bytes(b"z" * 3_000_000)
    os.utime(trained / "model.zip", (now - 5000, now - 5000))
    gone = trim_upload_folder(str(tmp_path), max_bytes=1_500_000, grace_s=120, now=now)
    assert gone == [str(paths[0]), str(paths[1]), str(paths[2])]  # oldest first, until under the cap
    assert not (tmp_path / "hash0").exists()  # its emptied folder too
    assert paths[3].exists() and (trained / "model.zip").exists()
    assert trim_upload_folder(str(tmp_path), max_bytes=0, grace_s=120, now=now) == []  # young: spared
