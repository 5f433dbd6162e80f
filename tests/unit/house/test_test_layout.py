"""The tests mirror the code: unit tests live under tests/unit/<package path>/ (tests/unit/house/ for rules of
the whole repository), what tests share lives in tests/helpers/ (no test module imports another test module),
and a test file is named after the code or behaviour it checks, never after a work item."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# Words that name a piece of work, not what a test checks.
WORK_WORDS = ("issue", "issues", "tidy", "contracts", "evidence", "notebooks", "corpus", "challenges", "todo",
              "fixme", "polish", "followup", "item", "items", "pr")


def flat_unit_tests(root: Path) -> list[str]:
    """Test files sitting directly in tests/unit/ instead of the folder of the package they check."""
    return sorted(str(p.relative_to(root)) for p in (root / "tests" / "unit").glob("test_*.py"))


def _test_module_names(root: Path) -> set[str]:
    """Dotted names of every test module and conftest.py under tests/."""
    paths = [*(root / "tests").rglob("test_*.py"), *(root / "tests").rglob("conftest.py")]
    return {".".join(p.relative_to(root).with_suffix("").parts) for p in paths}


def imports_of_test_modules(root: Path) -> list[str]:
    """'importer -> imported' for each module under tests/, bench/ or scripts/ that imports a test module or a
    conftest.py (a conftest may import helpers; nothing imports a conftest)."""
    tests = _test_module_names(root)
    found = []
    for folder in ("tests", "bench", "scripts"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = ".".join(path.relative_to(root).with_suffix("").parts)
            package = rel.rsplit(".", 1)[0]
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:  # relative: resolved against the importer's package
                        parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                        base = ".".join([*parent, *([base] if base else [])])
                    names = [base, *(f"{base}.{a.name}" for a in node.names)]
                found += [f"{path.relative_to(root)} -> {n}" for n in names if n in tests]
    return sorted(set(found))


def _work_item(name: str) -> bool:
    words = name.split("_")
    return any(w.lower() in WORK_WORDS for w in words) or any(re.fullmatch(r"\d+", w) for w in words)


def work_item_names(root: Path) -> list[str]:
    """Files under tests/ (and their folders) named after a work item: a work word or a bare number among the
    words of the name. A folder of tests/unit/ that mirrors a code folder keeps the code's name."""
    bad = []
    for path in sorted((root / "tests").rglob("*.py")):
        rel = path.relative_to(root)
        folders = rel.parts[1:-1]
        mirrored = rel.parts[:2] == ("tests", "unit") and (root / Path(*rel.parts[2:-1])).is_dir()
        if _work_item(path.stem) or (not mirrored and any(_work_item(f) for f in folders)):
            bad.append(str(rel))
    return bad


def test_no_unit_test_sits_flat_in_tests_unit():
    assert flat_unit_tests(ROOT) == [], "move them under tests/unit/<package path>/ (the code they check)"


def test_every_unit_test_folder_names_code_or_the_house():
    """A folder under tests/unit/ mirrors a folder of the code (backend/..., components/..., scripts) or is house/."""
    folders = {p.parent.relative_to(ROOT / "tests" / "unit") for p in (ROOT / "tests" / "unit").rglob("test_*.py")}
    stray = sorted(str(f) for f in folders if f.parts[0] != "house" and not (ROOT / f).is_dir())
    assert stray == []


def test_no_test_module_imports_another_test_module():
    assert imports_of_test_modules(ROOT) == [], "move what they share into tests/helpers/"


def test_no_test_file_is_named_after_a_work_item():
    assert work_item_names(ROOT) == []


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_fail_on_planted_breaks(tmp_path):
    root = _plant(tmp_path, {
        "tests/__init__.py": "", "tests/conftest.py": "", "tests/unit/__init__.py": "",
        "tests/unit/test_flat.py": "",
        "tests/unit/backend/runtime/test_budget.py": "from tests.unit.test_flat import x\n",
        "tests/unit/backend/runtime/test_other.py": "from . import test_budget\n",
        "tests/e2e/test_uses_conftest.py": "from tests.conftest import running_app\n",
        "tests/helpers/fine.py": "from tests.helpers import app\n",
        "bench/qa.py": "import tests.unit.backend.runtime.test_budget\n",
        "tests/unit/house/test_issue_35.py": "", "tests/browser/test_polish_items.py": "",
        "tests/unit/components/shell/test_lanes_2.py": "",
        "backend/challenges/__init__.py": "", "tests/unit/backend/challenges/test_answers.py": "",
        "tests/tidy/test_pages.py": "",
    })
    assert flat_unit_tests(root) == ["tests/unit/test_flat.py"]
    assert imports_of_test_modules(root) == [
        "bench/qa.py -> tests.unit.backend.runtime.test_budget",
        "tests/e2e/test_uses_conftest.py -> tests.conftest",
        "tests/unit/backend/runtime/test_budget.py -> tests.unit.test_flat",
        "tests/unit/backend/runtime/test_other.py -> tests.unit.backend.runtime.test_budget",
    ]
    assert work_item_names(root) == ["tests/browser/test_polish_items.py", "tests/tidy/test_pages.py",
                                     "tests/unit/components/shell/test_lanes_2.py", "tests/unit/house/test_issue_35.py"]
