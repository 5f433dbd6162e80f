"""backend/runtime/env.py is the one registry of `TLAB_` variables: docs/settings.md is generated from it,
every `TLAB_` name the repository mentions is registered, every registered one is used, and the code reads the
environment's `TLAB_` variables only through it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from backend.runtime import env

ROOT = Path(__file__).resolve().parents[4]
READERS = ("backend", "components", "scripts", "bench")  # and app.py: code that must read through the registry
MENTIONS = READERS + ("tests", ".ci")  # where a TLAB_ name may be written (and Makefile, scripts' shell)
NAME = re.compile(r"\bTLAB_[A-Z0-9_]*[A-Z0-9]\b")
REGISTRY_FILE = ROOT / "backend" / "runtime" / "env.py"


def _files(root: Path, dirs: tuple[str, ...], suffixes: tuple[str, ...]) -> list[Path]:
    found = [p for d in dirs for p in sorted((root / d).rglob("*")) if p.is_file() and p.suffix in suffixes]
    return found + [p for p in (root / "app.py", root / "Makefile") if p.exists() and
                    (p.suffix in suffixes or p.name == "Makefile" and "" in suffixes)]


def _tlab(node: ast.AST) -> bool:
    """A string (or an f-string that starts with one) naming a TLAB_ variable."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("TLAB_")
    if isinstance(node, ast.JoinedStr) and node.values:
        return _tlab(node.values[0])
    return False


def _environ(node: ast.AST) -> bool:
    """`os.environ` or `environ`."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ")


def direct_reads(root: Path) -> list[str]:
    """'path:line' of each read of a TLAB_ variable that bypasses the registry: os.environ.get / os.getenv /
    os.environ[...] as a value / `in os.environ`. Writes (assignment, setdefault, pop, a child's env) are not
    reads."""
    bad = []
    for path in _files(root, READERS, (".py",)):
        if path.resolve() == (root / "backend" / "runtime" / "env.py").resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            hit = False
            if isinstance(node, ast.Call) and node.args and _tlab(node.args[0]):
                f = node.func
                hit = (isinstance(f, ast.Attribute) and (f.attr == "getenv" or (f.attr == "get" and _environ(f.value)))
                       ) or (isinstance(f, ast.Name) and f.id == "getenv")
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _environ(node.value):
                hit = _tlab(node.slice)
            elif isinstance(node, ast.Compare) and _tlab(node.left):
                hit = any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(
                    _environ(c) for c in node.comparators)
            if hit:
                bad.append(f"{path.relative_to(root)}:{node.lineno}")
    return sorted(bad)


def mentioned(root: Path) -> dict[str, str]:
    """Each TLAB_ name written anywhere in the code, tests, Makefile and scripts -> one place it is written."""
    out: dict[str, str] = {}
    for path in _files(root, MENTIONS, (".py", ".sh", "", ".yml", ".yaml", ".toml", ".cfg")):
        if path.resolve() in (REGISTRY_FILE.resolve(), Path(__file__).resolve()):  # this file plants fake names
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            for name in NAME.findall(line):
                out.setdefault(name, f"{path.relative_to(root)}:{i}")
    return out


def unregistered(names: dict[str, str]) -> list[str]:
    bad = []
    for name, where in sorted(names.items()):
        try:
            env.var(name)
        except KeyError:
            bad.append(f"{name} ({where})")
    return bad


def test_docs_settings_is_the_registry_rendered():
    text = env.DOC.read_text(encoding="utf-8")
    assert env.rendered(text) == text, "run: python -m backend.runtime.env --write"
    for v in env.VARS:
        assert f"| `{v.name}` |" in text


def test_every_tlab_name_in_the_repository_is_registered():
    names = mentioned(ROOT)
    assert len(names) > 30  # the scan sees the code
    assert unregistered(names) == []


def test_every_registered_variable_is_used_somewhere():
    names = set(mentioned(ROOT))
    unused = [v.name for v in env.VARS if "<" not in v.name and v.name not in names]
    assert unused == []


def test_code_reads_tlab_variables_only_through_the_registry():
    assert direct_reads(ROOT) == []


def test_the_read_check_fails_on_planted_reads(tmp_path):
    (tmp_path / "backend" / "runtime").mkdir(parents=True)
    (tmp_path / "components").mkdir()
    (tmp_path / "app.py").write_text('import os\nif "TLAB_PUBLIC" not in os.environ:\n    os.environ["TLAB_PUBLIC"] = "1"\n')
    (tmp_path / "backend" / "a.py").write_text(
        'import os\nx = os.environ.get("TLAB_X", "1")\ny = os.getenv("TLAB_Y")\nz = os.environ["TLAB_Z"]\n'
        'w = os.environ.get(f"TLAB_MODEL_{r}")\nos.environ.setdefault("TLAB_OK", "1")\nok = os.environ.get("HOME")\n')
    (tmp_path / "components" / "b.py").write_text('from os import environ\nv = environ.get("TLAB_V")\n')
    assert direct_reads(tmp_path) == ["app.py:2", "backend/a.py:2", "backend/a.py:3", "backend/a.py:4",
                                      "backend/a.py:5", "components/b.py:2"]


def test_an_unregistered_name_is_refused_and_a_role_matches_its_pattern(monkeypatch):
    with pytest.raises(KeyError):
        env.read("TLAB_NOT_A_SETTING")
    assert unregistered({"TLAB_NOT_A_SETTING": "x.py:1", "TLAB_MODEL_DECODER": "y.py:2"}) == [
        "TLAB_NOT_A_SETTING (x.py:1)"]
    monkeypatch.delenv("TLAB_BATCH_MAX", raising=False)
    assert env.read("TLAB_BATCH_MAX") == env.var("TLAB_BATCH_MAX").default
    monkeypatch.setenv("TLAB_BATCH_MAX", "3")
    assert env.read("TLAB_BATCH_MAX") == "3" and env.raw("TLAB_BATCH_MAX") == "3"
