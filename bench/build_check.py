"""`make build` on a cache that is up to date: the hub's build's own check (no torch, no model) vs asking every
builder for its key (`--force`: each loads what its key reads and finds its folder; nothing is rebuilt).

Cold process starts both (what `make build` pays), timed from outside, several runs each; the load average is
printed with the figures. Needs a built cache (`make build`; run first when it is not up to date). Writes
bench/results/build_check.md. Run: .venv/bin/python bench/build_check.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "build_check.md"


def steps() -> list[str]:
    """The build's steps as the Makefile passes them (BUILD_STEPS)."""
    line = re.search(r"^BUILD_STEPS\s*:=(.*)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    return line.split()


def timed_build(force: bool) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "backend.hub", "build", *steps(), *(["--force"] if force else [])]
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stdout[-2000:] + out.stderr[-2000:])
    return time.perf_counter() - start, out.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    _, first = timed_build(force=False)  # builds what is missing (or nothing) and records the state
    load0 = os.getloadavg()
    quick = [timed_build(force=False) for _ in range(args.runs)]
    full = [timed_build(force=True)[0] for _ in range(max(1, args.runs // 2))]
    load1 = os.getloadavg()
    assert all("up to date" in out for _, out in quick), quick[0][1]
    q, f = statistics.median(t for t, _ in quick), statistics.median(full)
    lines = [
        "| what (cold process, up-to-date cache) | median s | runs | range s |",
        "|---|---|---|---|",
        f"| `python -m backend.hub build` (the hub's check: files only, no torch) | {q:.2f} | {len(quick)} | "
        f"{min(t for t, _ in quick):.2f}-{max(t for t, _ in quick):.2f} |",
        f"| the same with `--force` (every builder asked for its key: loads the base models) | {f:.2f} | {len(full)} | "
        f"{min(full):.2f}-{max(full):.2f} |",
        "",
        f"The check takes **{q:.2f} s** ({f / q:.0f}x less than asking every builder); load average "
        f"{load0[0]:.1f} before, {load1[0]:.1f} after ({os.cpu_count()} cores).",
        f"First call in this run: {'up to date' if 'up to date' in first else 'every builder asked (an input had changed since the last build; nothing to rebuild unless a key changed)'}.",
    ]
    text = "\n".join(lines)
    print(text)
    OUT.write_text(text + "\n")


if __name__ == "__main__":
    main()
