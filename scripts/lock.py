"""Write requirements.lock and requirements-dev.lock: the exact versions of the working .venv (the one CI
tested), for every package requirements.txt (and requirements-dev.txt) needs, directly or through another.

The closure is read from the installed packages' own metadata (Requires-Dist, markers evaluated here, extras
as asked), so the lock holds what these requirements pull and nothing else installed by hand. `make install`
installs requirements.lock, `make install-dev` requirements-dev.lock; a Space keeps requirements.txt.
Re-run after changing requirements*.txt and installing them:

    .venv/bin/python scripts/lock.py            # write both locks
    .venv/bin/python scripts/lock.py --check    # exit 1 when a lock differs from what it would write
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCKS = {"requirements.lock": ("requirements.txt",), "requirements-dev.lock": ("requirements.txt", "requirements-dev.txt")}
HEADER = ("# The exact versions CI tested (scripts/lock.py, from the working .venv): `make install` installs {what}.\n"
          "# Edit requirements{dev}.txt, install it, then run `.venv/bin/python scripts/lock.py`.\n")


def requirements(path: Path) -> list[Requirement]:
    out = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(Requirement(line))
    return out


def closure(roots: list[Requirement]) -> dict[str, str]:
    """name -> installed version, for the roots and everything they require here."""
    env, seen, todo = default_environment(), {}, [(r, set(r.extras)) for r in roots]
    while todo:
        req, extras = todo.pop()
        name = canonicalize_name(req.name)
        dist = metadata.distribution(req.name)
        key = (name, frozenset(extras))
        if key in seen:
            continue
        seen[key] = dist.version
        for raw in dist.requires or []:
            sub = Requirement(raw)
            if sub.marker is None or any(sub.marker.evaluate({**env, "extra": e}) for e in (extras or {""})):
                todo.append((sub, set(sub.extras)))
    # A local label (torch's "+cpu") names where a wheel came from, not a release: `==2.13.0` matches 2.13.0+cpu.
    return {name: version.split("+")[0] for (name, _), version in sorted(seen.items())}


def render(lock: str, sources: tuple[str, ...]) -> str:
    pins = closure([r for s in sources for r in requirements(ROOT / s)])
    dev = "-dev" if "dev" in lock else ""
    head = HEADER.format(what=f"this ({' + '.join(sources)})", dev=dev)
    return head + "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true")
    args = p.parse_args(argv)
    stale = []
    for lock, sources in LOCKS.items():
        text = render(lock, sources)
        if args.check:
            if (ROOT / lock).read_text() != text:
                stale.append(lock)
        else:
            (ROOT / lock).write_text(text)
            print(f"wrote {lock}: {text.count(chr(10)) - 2} packages")
    if stale:
        print(f"stale: {', '.join(stale)} (run .venv/bin/python scripts/lock.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
