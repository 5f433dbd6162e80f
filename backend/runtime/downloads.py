"""A download's folder, made only after making room: one zip per address and kind at a time, the
folder's cap checked at the door. A janitor alone is not enough: it spares zips younger than its grace
period, so a burst outruns it (30 `/compress_download` calls in 19 s would take the folder from 150 MB to
2,756 MB against a 512 MB cap).

    folder = downloads.new_folder(root, "compress")   # raises InputError when the folder is full
    ... write folder / "student.zip" ...

A new zip of the same kind from the same address replaces that address's last one (its link stops
working: the page shows the newest); a kind given `keep_bytes` (notebooks: one per run, each tab's own) keeps the
address's newest ones up to that many bytes together instead, the oldest going first. The folder belongs to the address (`clients.claim`): the upload
gate serves its files to that address only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from backend.runtime import clients
from backend.runtime import env
from backend.runtime.errors import InputError

PREFIX = "tlab-"  # the download folders' prefix (components/shell/session_memory.py trims them too)
DEFAULT_CAP_MB = float(env.var("TLAB_DOWNLOAD_FOLDER_MB").default)


def cap_mb() -> float:
    """All download zips together (TLAB_DOWNLOAD_FOLDER_MB, as the janitor reads it)."""
    try:
        return float(env.read("TLAB_DOWNLOAD_FOLDER_MB"))
    except ValueError:
        return DEFAULT_CAP_MB


def _tag(client: str) -> str:
    """A folder-name tag for an address that does not spell the address out."""
    return hashlib.sha256(f"tlab-downloads:{client}".encode()).hexdigest()[:12]


def folder_bytes(folder, skip_top=lambda name: False) -> int:
    """The bytes of every file under `folder`, leaving out its top-level sub-folders `skip_top` names."""
    folder, total = str(folder), 0
    for root, dirs, names in os.walk(folder):
        if root == folder:
            dirs[:] = [d for d in dirs if not skip_top(d)]
        for name in names:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def held_bytes(root: Path) -> int:
    """What every download folder under `root` holds."""
    return sum(folder_bytes(p) for p in root.glob(f"{PREFIX}*") if p.is_dir())


def new_folder(root: str | Path | None, kind: str, expected_bytes: int = 0, keep_bytes: int | None = None) -> Path:
    """A new folder for one `kind` of download of the current address, under `root` (default: the
    system's temp folder): this address's previous `kind` folder goes first (with `keep_bytes`: its oldest
    `kind` folders go until the new one fits beside the rest in `keep_bytes`, so earlier links keep working);
    then the request is refused when the zip (`expected_bytes`) would take the folder past its cap."""
    base = Path(root) if root else Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    client = clients.current() or "local"
    mine = f"{PREFIX}{kind}-{_tag(client)}-"
    _make_room(sorted(base.glob(f"{mine}*"), key=_age), expected_bytes, keep_bytes)
    cap = cap_mb() * 2**20
    held = held_bytes(base)
    if held + expected_bytes > cap:
        raise InputError(
            f"The server's download folder is full ({held / 2**20:,.0f} MB of its {cap / 2**20:,.0f} MB, "
            "TLAB_DOWNLOAD_FOLDER_MB): older downloads are removed within minutes. Try again shortly.")
    folder = Path(tempfile.mkdtemp(prefix=mine, dir=base))
    clients.claim(folder, client)
    return folder


def _age(path: Path) -> tuple[float, str]:
    try:
        return path.stat().st_mtime, path.name
    except OSError:
        return 0.0, path.name


def _make_room(old: list[Path], expected_bytes: int, keep_bytes: int | None) -> None:
    """Remove `old` folders (oldest first): all of them without `keep_bytes`, else until `expected_bytes` more fit."""
    sizes = [folder_bytes(p) for p in old]
    while old and (keep_bytes is None or sum(sizes) + expected_bytes > keep_bytes):
        shutil.rmtree(old.pop(0), ignore_errors=True)
        sizes.pop(0)
