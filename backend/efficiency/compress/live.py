"""A learner's live chapter 8 runs: owned by the address that made them, under ids nobody else can
compute, and evicted only by their owner or after they have gone unused (an id that is a hash of the
settings alone would let another address reach a run by choosing the same settings, and six cheap
custom calls could push another address's run out of a shared 6-run cache).

- `run_id(settings)`: sha256 of the settings, the address and a secret kept in the cache (made once):
  the same learner with the same settings continues the same run; nobody else can name it.
- `claim(folder)` / `owned(folder)`: the owner's tag is written in the run's folder; a run of another
  address answers as a run that is gone (its existence is not told).
- `make_room(root, keep)`: before a new run starts, at most PER_CLIENT runs of this address (its oldest
  go) and LIVE_KEEP runs in all; another address's run goes only once unused for keep_items_s, else
  the new run is refused with when to come back.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import time
from pathlib import Path

from backend.runtime import clients, config
from backend.runtime.errors import InputError

LIVE_KEEP = 6  # live runs kept in the cache, all addresses together
PER_CLIENT = 2  # ... of which one address may hold this many
OWNER_FILE = "owner.txt"
SECRET_FILE = ".run-secret"


def _secret(root: Path) -> str:
    path = root / SECRET_FILE
    if not path.exists():
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".tmp-{secrets.token_hex(4)}"
        tmp.write_text(secrets.token_hex(16))
        try:
            tmp.rename(path) if not path.exists() else tmp.unlink()
        except OSError:
            tmp.unlink(missing_ok=True)
    return path.read_text().strip()


def _tag(client: str | None) -> str:
    return hashlib.sha256(f"tlab-compress:{client or 'local'}".encode()).hexdigest()[:16]


def run_id(settings, root: Path) -> str:
    """The id of this address's run with these settings (16 hex digits)."""
    blob = json.dumps(settings.__dict__, sort_keys=True, default=list)
    key = f"{blob}|{clients.current() or 'local'}|{_secret(root)}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def claim(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / OWNER_FILE).exists():
        (folder / OWNER_FILE).write_text(_tag(clients.current()))


def owned(folder: Path) -> bool:
    """Is `folder` a run of the address being served? (True outside a request: a script, a test.)"""
    if clients.current() is None:
        return True
    try:
        return (folder / OWNER_FILE).read_text().strip() == _tag(clients.current())
    except OSError:
        return False


def _idle_s(folder: Path, now: float) -> float:
    return now - folder.stat().st_mtime


def make_room(root: Path, keep: Path, now: float | None = None) -> list[Path]:
    """Evict runs so that `keep` (the run about to start or continue) fits; -> the evicted folders."""
    now = time.time() if now is None else now
    runs = sorted((p for p in root.glob("*") if p.is_dir() and p != keep and not p.name.startswith(".")),
                  key=lambda p: p.stat().st_mtime)
    mine = [p for p in runs if owned(p)] if clients.current() is not None else runs
    gone = mine[:max(0, len(mine) - (PER_CLIENT - 1))]
    others = [p for p in runs if p not in mine]
    over = len(runs) - len(gone) - (LIVE_KEEP - 1)
    idle = config.get_settings().keep_items_s
    for p in others:
        if over <= 0:
            break
        if _idle_s(p, now) >= idle:
            gone.append(p)
            over -= 1
    if over > 0:
        wait = min(idle - _idle_s(p, now) for p in others) if others else 0
        raise InputError(
            f"This server keeps {LIVE_KEEP} live runs and every place is held by another visitor's recent run. "
            f"Try again in about {max(1, round(wait / 60))} minute(s), or look at the default run (built at set-up).")
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return gone
