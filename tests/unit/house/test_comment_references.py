"""The prose of the code (comments and docstrings) says what the code does and why, never which work item
changed it or what it was before: that is in git. Checked on every .py file of the repository's code and tests.

What counts as a work-item reference: "issue 35", "Issue #52", "issues #21 and #39", "(#54)", or a bare `#NN`
after a space or an opening bracket in a comment or docstring. What does not: a CSS colour ("#1f77b4", "#333"
inside a string the code uses), "token #2" or "#1" in text the code prints (strings that are not docstrings are
not prose), a comment's own leading `#`. History: a small list of phrases that only tell what the code was
("before the fix", "used to be", "old home", ...)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CODE = ("backend", "components", "scripts", "bench", "tests")  # and app.py
WORK_ITEM = re.compile(r"\bissues?\s+#?\d+|\bitem\s+#\d+|(?:^|[\s(\[])#\d{1,4}\b(?![0-9a-fA-F])", re.IGNORECASE)
ANYWHERE = re.compile(r"\bissues?\s+#\d+|\bissue\s+\d+\b", re.IGNORECASE)  # in any string, shown or not
HISTORY = re.compile(r"\bbefore the fix\b|\bbefore this module\b|\bused to be\b|\bold home\b|\bin the issue\b|"
                     r"\bits done-when\b", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """Line numbers where a docstring (or a bare string statement: prose) starts."""
    return {node.lineno for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def findings(path: Path, root: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    prose_starts = _docstrings(ast.parse(text, str(path)))
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            prose = tok.string.lstrip("#")
        elif tok.type == tokenize.STRING:
            if ANYWHERE.search(tok.string):
                out.append(f"{path.relative_to(root)}:{tok.start[0]}")
                continue
            if tok.start[0] not in prose_starts:
                continue
            prose = tok.string
        else:
            continue
        if WORK_ITEM.search(prose) or HISTORY.search(prose):
            out.append(f"{path.relative_to(root)}:{tok.start[0]}")
    return out


def prose_findings(root: Path) -> list[str]:
    paths = [p for d in CODE for p in sorted((root / d).rglob("*.py"))] + [p for p in [root / "app.py"] if p.exists()]
    return [hit for p in paths if p.resolve() != Path(__file__).resolve() for hit in findings(p, root)]


def test_no_work_item_numbers_or_history_in_the_codes_prose():
    assert prose_findings(ROOT) == []


def test_the_prose_check_fails_on_planted_references_and_spares_what_is_not_one(tmp_path):
    (tmp_path / "backend").mkdir()
    (tmp_path / "app.py").write_text('"""The app (issue #52)."""\n')
    (tmp_path / "backend" / "a.py").write_text(
        '"""Module."""\n'
        "x = 1  # checked before a step (#39)\n"
        "y = 2  # Issue 35: polish\n"
        "COLOUR = '#1f77b4'  # plotly's first colour, and '#333' for text\n"
        "TITLE = 'before generated token #2'  # a string the page shows\n"
        "def f():\n"
        '    """What it does; the old home of these was elsewhere."""\n'
        "    return 'see issue #7'\n"
        "z = 3  # the best of #2 and #3 ranks: said in a comment, so it reads as a reference\n")
    assert prose_findings(tmp_path) == ["backend/a.py:2", "backend/a.py:3", "backend/a.py:7", "backend/a.py:8",
                                        "backend/a.py:9", "app.py:1"]
