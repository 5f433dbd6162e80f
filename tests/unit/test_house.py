"""Rules of the house (DESIGN.md), checked on the source so a break fails CI, not a review.

- `components/` never imports `backend.models`, torch or transformers: tabs pass roles.
- `backend/` never imports gradio: it returns plain data that any caller can use.
- Every backend package exports its entry points from `__init__`.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = sorted((ROOT / "components").glob("*.py"))
BACKEND = sorted((ROOT / "backend").rglob("*.py"))
PACKAGES = sorted(p.parent.name for p in (ROOT / "backend").glob("*/__init__.py"))


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports inside functions count)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _hits(path: Path, banned: tuple[str, ...]) -> list[str]:
    return sorted(m for m in imported_modules(path) if any(m == b or m.startswith(b + ".") for b in banned))


@pytest.mark.parametrize("path", COMPONENTS, ids=lambda p: p.name)
def test_components_never_touch_the_model_hub_or_torch(path):
    assert _hits(path, ("backend.models", "torch", "transformers")) == []


@pytest.mark.parametrize("path", BACKEND, ids=lambda p: str(p.relative_to(ROOT)))
def test_backend_never_imports_gradio(path):
    assert _hits(path, ("gradio", "gradio_client", "components")) == []


def test_the_house_check_sees_lazy_imports(tmp_path):
    """The check itself must catch an import hidden inside a function."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from backend import models\n    import torch.nn\n")
    assert _hits(bad, ("backend.models", "torch")) == ["backend.models", "torch.nn"]


def test_app_reads_the_hub_only_for_the_status_panel():
    tree = ast.parse((ROOT / "app.py").read_text())
    users = set()
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.module == "backend.models":
                users.add(fn.name)
    assert users <= {"status_rows", "status_header", "main"}, users


@pytest.mark.parametrize("package", PACKAGES)
def test_each_backend_package_exports_its_entry_points(package):
    mod = importlib.import_module(f"backend.{package}")
    exported = getattr(mod, "__all__", None)
    assert exported, f"backend/{package}/__init__.py lists no entry points in __all__"
    missing = [name for name in exported if not callable(getattr(mod, name, None)) and not hasattr(mod, name)]
    assert missing == []
