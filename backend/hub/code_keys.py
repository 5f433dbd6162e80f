"""The code a build runs, as its cache key reads it: a change to a builder's or a recipe's code builds again.

`code_files(modules)` is the static import closure of the builder modules: each named module, and
every `backend.engines` module they import (at any depth, lazy imports included), read from the
source without importing anything (no torch). The runtime layer (settings, budgets, devices) and the
rest of the hub (resolution, loading) are the plumbing around a build, not what it trains; a change
there does not rebuild. `code_digest` hashes that code as Python reads it (comments and docstrings
left out), so a reworded comment does not retrain a model for ten minutes.

Builds cached before their keys covered their code keep their keys while their code is the code they
were built from: `BUILT_FROM` (code_keys.json) holds that code's digest per recipe, and `code_salt`
adds nothing to the key while the digest matches, the digest itself once it differs. A new recipe
(or a bumped version) is not listed, so its key always holds its code's digest. A change checked to
build the same thing may be adopted into the record (scripts/code_keys.py --adopt), so it does not
rebuild; the commit says why.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parents[2]
FOLLOW = "backend.engines"  # the layer whose modules a build's code closure follows
BUILT_FROM = json.loads((Path(__file__).with_name("code_keys.json")).read_text())


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The source file of a module of this repository (a package's __init__.py), or None."""
    path = root.joinpath(*name.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imported(path: Path) -> set[str]:
    """The `backend` modules a file imports at any depth (`from a import b` may name a module a.b)."""
    out: set[str] = set()
    for node in _statements(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return {name for name in out if name.split(".")[0] == "backend"}


def _statements(nodes: list) -> Iterable[ast.AST]:
    """Every statement, at any depth (imports are statements: expressions need no visit, which is most of a tree)."""
    for node in nodes:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def closure(modules: Iterable[str], follow: str | None = FOLLOW, root: Path = ROOT) -> dict[str, Path]:
    """module -> file: the named modules and what they import, transitively; with `follow`, only
    modules under that prefix are followed past the named ones (None follows all of `backend`)."""
    seen: dict[str, Path] = {}
    todo = [(name, True) for name in modules]
    while todo:
        name, named = todo.pop()
        if name in seen or not (named or follow is None or name == follow or name.startswith(follow + ".")):
            continue
        path = module_file(name, root)
        if path is None:
            continue
        seen[name] = path
        todo.extend((n, False) for n in imported(path))
    return seen


def code_files(modules: Iterable[str]) -> list[Path]:
    return sorted(closure(modules).values())


def normalised(source: str) -> str:
    """The code as Python reads it: comments, docstrings and layout dropped."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def read_source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def code_digest(modules: Iterable[str]) -> str:
    """One digest of the code in the modules' closure (order- and location-free: a file moved keeps its digest)."""
    parts = sorted(hashlib.sha256(normalised(read_source(p)).encode()).hexdigest() for p in code_files(modules))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def _cached_digest(modules: tuple[str, ...]) -> str:
    return code_digest(modules)  # the source does not change under a running process


def code_salt(recipe: str, modules: Iterable[str]) -> bytes:
    """What a build's key adds for its code: nothing while the code is what the cached build was made
    from (`BUILT_FROM`), its digest otherwise."""
    digest = _cached_digest(tuple(modules))
    return b"" if BUILT_FROM.get(recipe) == digest else b"code:" + digest.encode()
