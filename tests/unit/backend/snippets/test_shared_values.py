"""A snippet (backend/snippets) imports the values it shares with the code that made the result, or reads them
from the run's result: it never holds its own copy, which would drift the day the app's value changes.

Checked on the source of every snippet module:
- a module-level constant holding a number is one of the snippets' own presentation choices (SNIPPET_OWN);
- no module-level literal equals, by name and value, a literal constant defined elsewhere in backend/;
- a fallback written into a snippet writer (`x.get(key, N)`, `x or N`) is no number other than 0, 1 or -1
  (0 and 1 mean "off" and "one": a default that is not one of them is the endpoint's, to read from the run);
- the code a snippet writes names no setting as a bare number (`max_length=256`, `internal_batch_size=8`):
  the number is formatted in from the imported value or the run's.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
SNIPPETS = "backend/snippets"
# The snippets' own choices of how a snippet reads, which no other code has
SNIPPET_OWN = {
    ("text.py", "LONG_ARGUMENT"): "a text argument longer than this is named above the client call",
    ("scratch.py", "MAX_LITERAL"): "a pasted text longer than this is read from a file in the snippet",
    ("notebook.py", "KEEP_BYTES"): "an address's notebooks kept on the server together",
    ("__init__.py", "FAMILIES"): "each endpoint's book chapter, the number the page links",
}
SETTING = re.compile(r"\b(max_length|batch_size|internal_batch_size|n_steps|max_new_tokens|min_new_tokens|stride|"
                     r"num_beams|top_k|top_p|temperature|max_iter|weight_decay|dropout|lr|epochs|steps)\s*=\s*-?\d")
NEUTRAL = (0, 1, -1)


def _numbers(node: ast.AST) -> list:
    """Numeric literals in `node`, leaving out subscripts' indices (`parents[2]`, `row[0]`)."""
    skip = {id(n) for s in ast.walk(node) if isinstance(s, ast.Subscript) for n in ast.walk(s.slice)}
    return [n.value for n in ast.walk(node) if id(n) not in skip and isinstance(n, ast.Constant)
            and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)]


def _module_literals(path: Path) -> dict[str, tuple[object, ast.AST]]:
    """name -> (literal value or None, value node) of each module-level assignment."""
    out = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            literal = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError):
            literal = None
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = (literal, value)
    return out


def copied_constants(root: Path) -> list[str]:
    snippets = sorted((root / SNIPPETS).glob("*.py"))
    elsewhere: dict[str, list[tuple[object, str]]] = {}
    for path in sorted((root / "backend").rglob("*.py")):
        if SNIPPETS in path.as_posix():
            continue
        for name, (literal, _) in _module_literals(path).items():
            if literal is not None:
                elsewhere.setdefault(name, []).append((literal, str(path.relative_to(root))))
    bad = []
    for path in snippets:
        where = f"{SNIPPETS}/{path.name}"
        for name, (literal, value) in _module_literals(path).items():
            if _numbers(value) and (path.name, name) not in SNIPPET_OWN:
                bad.append(f"{where}: {name} holds a number: import it from the code that made the result")
            for other, origin in elsewhere.get(name, []):
                if literal is not None and literal == other:
                    bad.append(f"{where}: {name} copies {origin}'s {name}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            fallback = None
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and len(node.args) == 2):
                fallback = node.args[1]
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                fallback = node.values[-1]
            if fallback is not None and isinstance(fallback, ast.Constant) and _numbers(fallback) \
                    and fallback.value not in NEUTRAL:
                bad.append(f"{where}:{node.lineno}: a fallback of {fallback.value!r}: read the run's value")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SETTING.search(node.value):
                bad.append(f"{where}:{node.lineno}: the snippet's code says {SETTING.search(node.value).group(0)}...")
    return sorted(bad)


def test_snippets_hold_no_copy_of_a_value_the_app_defines():
    assert copied_constants(ROOT) == []


def test_the_copy_check_fails_on_planted_copies(tmp_path):
    (tmp_path / "backend" / "why").mkdir(parents=True)
    (tmp_path / SNIPPETS).mkdir(parents=True)
    (tmp_path / "backend" / "why" / "methods.py").write_text('IG_BATCH = 8\nMODE = "occlusion"\nROWS = ("a", "b")\n')
    (tmp_path / SNIPPETS / "why.py").write_text(
        'from backend.why.methods import IG_BATCH as BATCH\n'  # imported: fine
        'IG_BATCH = 8\n'                                    # a number
        'MODE = "occlusion"\n'                              # the same literal, by name and value
        'ROWS = ("a", "c")\n'                               # same name, another value: not a copy
        'ASSETS = Path(__file__).parents[2]\n'              # an index is not a number held
        'def f(s):\n'
        '    n = s.get("steps", 32) + s.get("seed", 0)\n'   # 32 restates a default; 0 is "none"
        '    m = s.get("k") or 5\n'
        '    return [f"lig.attribute(ids, n_steps={n})", "x = run(batch_size=16)"]\n')
    assert copied_constants(tmp_path) == sorted([
        f"{SNIPPETS}/why.py: IG_BATCH holds a number: import it from the code that made the result",
        f"{SNIPPETS}/why.py: IG_BATCH copies backend/why/methods.py's IG_BATCH",
        f"{SNIPPETS}/why.py: MODE copies backend/why/methods.py's MODE",
        f"{SNIPPETS}/why.py:7: a fallback of 32: read the run's value",
        f"{SNIPPETS}/why.py:8: a fallback of 5: read the run's value",
        f"{SNIPPETS}/why.py:9: the snippet's code says batch_size=1...",
    ])
