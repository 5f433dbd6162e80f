"""What Gradio keeps per visitor, bounded.

Gradio copies the value of every input and output of every event into the visitor's session
(its per-session config values; see gradio_patches), only so that its deep links (`gr.DeepLinkButton`, which this app
does not use) can rebuild the page later; and it keeps up to 10,000 sessions. Measured here: a
20,000-character /tokenize left ~11 MB in each new session, so 150 visitors took the process
from 0.6 to 2.3 GB and nothing ever gave it back. `bound()` stops the copies (the values live
in the page and in the API response, not on the server) and `STATE_SESSIONS` sets how many
sessions Gradio keeps at all (the oldest goes first; what they hold is small now: gr.State).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time

from backend.runtime import env
from components.shell import gradio_patches

STATE_SESSIONS = 1000  # sessions whose gr.State Gradio keeps (launch(state_session_capacity=...))
UPLOAD_FOLDER_MAX_MB = float(env.var("TLAB_UPLOAD_FOLDER_MB").default)  # the upload folder's cap: oldest go beyond it
UPLOAD_GRACE_S = 120  # an upload this young is never deleted: its request may be about to read it
UPLOAD_MAX_FILES = 4  # files per request to /gradio_api/upload (Gradio's own limit is 1,000; every input here takes one)


def bound() -> None:
    """Keep no per-session copies of component values or configs for deep links (idempotent)."""
    gradio_patches.no_session_value_copies()


def patient_start() -> None:
    """Launch waits up to 2 minutes for its own page to answer (gradio_patches.patient_startup_check)."""
    gradio_patches.patient_startup_check()


def limit_uploads(max_files: int = UPLOAD_MAX_FILES) -> None:
    """At most `max_files` files per upload request: Gradio 6 has no setting for it and takes
    1,000 (of up to max_file_size each) in one request. Idempotent."""
    gradio_patches.limit_upload_files(max_files)


def upload_folder() -> str:
    """Gradio's upload folder (GRADIO_TEMP_DIR, else the system temp dir's 'gradio')."""
    return os.path.realpath(os.environ.get("GRADIO_TEMP_DIR") or os.path.join(tempfile.gettempdir(), "gradio"))


def trim_upload_folder(folder: str, max_bytes: int, grace_s: float = UPLOAD_GRACE_S,
                       now: float | None = None) -> list[str]:
    """Delete the oldest files under `folder` until it holds at most `max_bytes`, sparing files
    younger than `grace_s` and the stores' download folders (tlab-*: `trim_downloads` bounds them, and
    their store deletes them with their session). Gradio's delete_cache removes files after an hour; a stranger can post
    gigabytes in that hour, so this caps the folder in between. -> the deleted paths."""
    keep = lambda d: not d.startswith(DOWNLOAD_PREFIX)  # noqa: E731  trim_downloads' part
    return _trim_oldest(_files_under(folder, keep), max_bytes, grace_s, now, prune_below=folder)


DOWNLOAD_PREFIX = "tlab-"  # the stores' download folders (tlab-train-*, tlab-gpt-*): one zip of up to ~90 MB each
DOWNLOADS_MAX_MB = float(env.var("TLAB_DOWNLOAD_FOLDER_MB").default)  # all of them together (TLAB_DOWNLOAD_FOLDER_MB): the oldest zips go beyond it


DOWNLOAD_MAX_AGE_S = 600  # a zip this old goes whatever the folder holds: its link was handed out minutes ago


def trim_downloads(folder: str, max_bytes: int, grace_s: float = UPLOAD_GRACE_S, now: float | None = None,
                   max_age_s: float = DOWNLOAD_MAX_AGE_S) -> list[str]:
    """Delete the download zips (files in the stores' tlab-* folders) older than `max_age_s`, then the oldest
    until they hold at most `max_bytes` together, sparing those younger than `grace_s` (their link was just
    handed out). Each NER zip is ~90 MB: 32 sessions left 2.9 GB in a folder nothing trimmed; trimmed only
    above its cap, a folder held 495 of its 512 MB for 12 minutes and refused everyone's next zip. A zip that
    goes is made again by the next Download click. -> the deleted paths."""
    files = []
    for entry in os.scandir(folder) if os.path.isdir(folder) else ():
        if entry.is_dir(follow_symlinks=False) and entry.name.startswith(DOWNLOAD_PREFIX):
            files += _files_under(entry.path)
    now = time.time() if now is None else now
    stale = [f for f in files if now - f[0] >= max(max_age_s, grace_s)]
    deleted = _trim_oldest(stale, 0, grace_s, now)
    return deleted + _trim_oldest([f for f in files if f not in stale], max_bytes, grace_s, now)


DOWNLOAD_FOLDER = os.path.join(".cache", "tlab-downloads")  # under the working directory (.cache/ is git-ignored)


def download_root() -> str:
    """Where the stores write a download's zip (their tlab-* folders), so that no reply names a server
    path. Gradio replies with a file's `path` and its `/gradio_api/file=<path>` URL, made
    absolute for a file it copies to its cache; a file under a static path (`gr.set_static_paths`) is
    served where it is and keeps the path it was given, so `served()` gives it relative to the working
    directory (`.cache/tlab-downloads/tlab-train-x/model.zip`). The owner check (upload_gate) resolves it
    the same way. Where the working directory cannot hold it: the upload folder, absolute, as before."""
    path = os.path.join(os.getcwd(), DOWNLOAD_FOLDER)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return upload_folder()
    if path not in _STATIC:
        import gradio as gr

        gr.set_static_paths([path])
        _STATIC.add(path)
    return path


_STATIC: set[str] = set()


def served(path: str) -> str:
    """A download's path as a handler returns it: relative to the working directory when it is under it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _files_under(folder: str, keep_dir=lambda name: True) -> list[tuple[float, int, str]]:
    """(mtime, size, path) of every file under `folder`, in the sub-folders `keep_dir` accepts."""
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if keep_dir(d)]
        for name in names:
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            files.append((st.st_mtime, st.st_size, path))
    return files


def _trim_oldest(files, max_bytes: int, grace_s: float, now: float | None, prune_below: str | None = None) -> list[str]:
    """Delete the oldest of `files` until they total at most `max_bytes`, sparing those younger than
    `grace_s`; with `prune_below`, an emptied folder under it goes too. -> the deleted paths."""
    now = time.time() if now is None else now
    total, deleted = sum(size for _, size, _ in files), []
    for mtime, size, path in sorted(files):
        if total <= max_bytes or now - mtime < grace_s:
            break
        try:
            os.unlink(path)
            parent = os.path.dirname(path)
            if prune_below is not None and parent != prune_below and not os.listdir(parent):
                os.rmdir(parent)
        except OSError:
            continue
        total -= size
        deleted.append(path)
    return deleted


def mb_setting(name: str, default: float) -> int:
    """A size setting in MB from the environment, in bytes (the default where it does not read as a number)."""
    try:
        return int(float(env.read(name, str(default))) * 1024 * 1024)
    except ValueError:
        return int(default * 1024 * 1024)


def keep_uploads_bounded(every_s: float = 10.0, stop: threading.Event | None = None) -> threading.Thread:
    """A daemon thread that trims the upload folder to TLAB_UPLOAD_FOLDER_MB and the download zips in it
    to TLAB_DOWNLOAD_FOLDER_MB every `every_s` (uploads are also bounded at the door: upload_gate.py), until
    `stop` is set. Each pass reads the caps anew: an operator may change them on a running app (live_settings.py)."""
    stop = stop or threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                max_bytes = mb_setting("TLAB_UPLOAD_FOLDER_MB", UPLOAD_FOLDER_MAX_MB)
                max_downloads = mb_setting("TLAB_DOWNLOAD_FOLDER_MB", DOWNLOADS_MAX_MB)
                trim_upload_folder(upload_folder(), max_bytes)
                trim_downloads(upload_folder(), max_downloads)  # zips made before download_root()
                trim_downloads(download_root(), max_downloads)
            except OSError:
                pass

    thread = threading.Thread(target=loop, name="tlab-upload-janitor", daemon=True)
    thread.start()
    return thread
