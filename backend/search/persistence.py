"""The search cache on disk: what a crashed write leaves behind, and the index metadata files."""

from __future__ import annotations

import json
import os
import time


STALE_TEMP_S = 60.0  # no atomic write takes this long; an older `.tmp-*` file is a crash's leftover


def clean_stale_temp_files(folder: str, older_than_s: float = STALE_TEMP_S) -> int:
    """Delete `.tmp-*` files a crashed atomic write left under `folder` -> how many. Recent ones
    are kept: another process sharing the cache may be writing them right now."""
    removed, now = 0, time.time()
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if not name.startswith(".tmp-"):
                continue
            path = os.path.join(root, name)
            try:
                if now - os.path.getmtime(path) > older_than_s:
                    os.unlink(path)
                    removed += 1
            except OSError:
                pass
    return removed


def read_json(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)
