"""The lock files `make install` / `make install-dev` read (scripts/lock.py) pin every package requirements*.txt
names, at the version requirements*.txt pins and inside the range it allows, and the dev lock holds the runtime
lock's versions."""

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[3]
LOCKS = {"requirements.lock": ["requirements.txt"], "requirements-dev.lock": ["requirements.txt", "requirements-dev.txt"]}


def _lines(path: Path) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in path.read_text().splitlines() if line.split("#", 1)[0].strip()]


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in _lines(path):
        name, _, version = line.partition("==")
        assert version and not set(version) & set("<>=!~*,; "), f"{path.name}: {line!r} is not an exact pin"
        out[canonicalize_name(name)] = version
    return out


def problems(root: Path, lock: str, sources: list[str]) -> list[str]:
    pinned, out = pins(root / lock), []
    for source in sources:
        for line in _lines(root / source):
            req = Requirement(line)
            name = canonicalize_name(req.name)
            exact = [s.version for s in req.specifier if s.operator == "=="]
            if name not in pinned:
                out.append(f"{lock} does not pin {req.name} ({source})")
            elif not req.specifier.contains(pinned[name], prereleases=True) or (exact and exact != [pinned[name]]):
                out.append(f"{lock}: {req.name} {pinned[name]}, {source} asks {req.specifier}")
    return out


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_the_lock_pins_every_requirement_within_what_it_allows(lock):
    assert problems(ROOT, lock, LOCKS[lock]) == []


def test_the_dev_lock_keeps_the_runtime_locks_versions():
    runtime, dev = pins(ROOT / "requirements.lock"), pins(ROOT / "requirements-dev.lock")
    assert {n: v for n, v in dev.items() if n in runtime} == runtime


def test_make_install_reads_the_locks_and_a_space_its_requirements():
    make = (ROOT / "Makefile").read_text()
    assert "-r requirements.lock" in make and "-r requirements-dev.lock" in make
    assert "-r requirements.txt" in make  # the Space's venv (make space-venv): what a Space installs


def test_the_check_finds_a_missing_pin_and_another_version(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy\ngradio==6.31.0\ntorch>=2.8,<2.14\n")
    (tmp_path / "requirements.lock").write_text("gradio==6.30.0\ntorch==2.14.0\n")
    assert problems(tmp_path, "requirements.lock", ["requirements.txt"]) == [
        "requirements.lock does not pin numpy (requirements.txt)",
        "requirements.lock: gradio 6.30.0, requirements.txt asks ==6.31.0",
        "requirements.lock: torch 2.14.0, requirements.txt asks <2.14,>=2.8"]
