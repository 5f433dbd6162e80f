"""Rules of the house (DESIGN.md), checked on the source so a break fails CI, not a review.

- The backend is in layers: runtime < engines < hub < tabs (one package per tab) < components.
  A module imports only from its own layer or below; a tab package never imports another tab
  package; there is no import cycle anywhere in `backend/`.
- `components/` never imports the hub, torch or transformers: tabs pass roles.
- `backend/` never imports gradio: it returns plain data that any caller can use.
- Every tab package (and the hub) exports its entry points from `__init__`.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
COMPONENTS = sorted((ROOT / "components").rglob("*.py"))
BACKEND = sorted((ROOT / "backend").rglob("*.py"))
LAYERS = {"runtime": 0, "engines": 1, "hub": 2}
TAB = 3
PACKAGES = sorted(p.parent.name for p in (ROOT / "backend").glob("*/__init__.py"))
TABS = [p for p in PACKAGES if p not in LAYERS]


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


# ----------------------------------------------------------------------------- the layers
def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def backend_graph(root: Path) -> dict[str, set[str]]:
    """module -> the backend modules it imports (a `from pkg import sub` names the submodule only)."""
    files = {module_name(root, p): p for p in (root / "backend").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.split(".")[0] == "backend")
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "backend":
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in files]
                deps.update(subs)
                if len(subs) < len(node.names):  # names defined in the module itself
                    deps.add(node.module)
        graph[mod] = {d for d in deps if d in files and d != mod and d != "backend"}
    return graph


def layer_of(module: str) -> tuple[int, str | None]:
    """(layer, tab package or None) of a backend module."""
    parts = module.split(".")
    if len(parts) < 2:
        return -1, None
    if parts[1] in LAYERS:
        return LAYERS[parts[1]], None
    return TAB, parts[1]


def layer_violations(root: Path) -> list[str]:
    bad = []
    for mod, deps in backend_graph(root).items():
        layer, tab = layer_of(mod)
        for dep in sorted(deps):
            dep_layer, dep_tab = layer_of(dep)
            if dep_layer > layer:
                bad.append(f"{mod} (layer {layer}) imports {dep} (layer {dep_layer}), above it")
            elif layer == TAB and dep_layer == TAB and dep_tab != tab:
                bad.append(f"tab {tab} ({mod}) imports tab {dep_tab} ({dep})")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_backend_layers_only_import_downwards_and_tabs_never_import_each_other():
    assert layer_violations(ROOT) == []


def test_backend_has_no_import_cycle():
    assert cycles(backend_graph(ROOT)) == []


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_layer_check_fails_on_planted_violations(tmp_path):
    """A check that cannot fail proves nothing: plant each kind of violation and see it caught."""
    root = _plant(tmp_path, {
        "backend/__init__.py": "",
        "backend/runtime/__init__.py": "",
        "backend/runtime/budget.py": "def f():\n    from backend.hub import loader\n",  # lazy, upwards
        "backend/engines/__init__.py": "",
        "backend/engines/gen.py": "from backend.search import api\n",  # server -> tab
        "backend/hub/__init__.py": "",
        "backend/hub/loader.py": "from backend.runtime import budget\n",
        "backend/search/__init__.py": "",
        "backend/search/api.py": "from backend.pipelines import tasks\n",  # tab -> tab
        "backend/pipelines/__init__.py": "",
        "backend/pipelines/tasks.py": "from backend.engines import gen\n",
    })
    bad = layer_violations(root)
    assert any("backend.runtime.budget" in b and "backend.hub.loader" in b for b in bad), bad
    assert any("backend.engines.gen" in b and "backend.search.api" in b for b in bad), bad
    assert any("tab search" in b and "tab pipelines" in b for b in bad), bad
    assert len(bad) == 3
    # runtime.budget -> hub.loader -> runtime.budget, and engines.gen -> search -> pipelines -> engines.gen
    assert sorted(cycles(backend_graph(root))) == [
        ["backend.engines.gen", "backend.pipelines.tasks", "backend.search.api"],
        ["backend.hub.loader", "backend.runtime.budget"]]


# ----------------------------------------------------------------------------- UI and backend apart
@pytest.mark.parametrize("path", COMPONENTS, ids=lambda p: p.name)
def test_components_never_touch_the_model_hub_or_torch(path):
    assert _hits(path, ("backend.hub", "backend.engines", "torch", "transformers")) == []


@pytest.mark.parametrize("path", BACKEND, ids=lambda p: str(p.relative_to(ROOT)))
def test_backend_never_imports_gradio(path):
    assert _hits(path, ("gradio", "gradio_client", "components")) == []


def test_the_house_check_sees_lazy_imports(tmp_path):
    """The check itself must catch an import hidden inside a function."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from backend import hub\n    import torch.nn\n")
    assert _hits(bad, ("backend.hub", "torch")) == ["backend.hub", "torch.nn"]


def test_app_reads_the_hub_only_for_the_status_panel():
    tree = ast.parse((ROOT / "app.py").read_text())
    users = set()
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.module == "backend.hub":
                users.add(fn.name)
    assert users <= {"status_rows", "status_header", "main"}, users


@pytest.mark.parametrize("package", TABS + ["hub"])
def test_each_backend_package_exports_its_entry_points(package):
    mod = importlib.import_module(f"backend.{package}")
    exported = getattr(mod, "__all__", None)
    assert exported, f"backend/{package}/__init__.py lists no entry points in __all__"
    missing = [name for name in exported if not callable(getattr(mod, name, None)) and not hasattr(mod, name)]
    assert missing == []


# ----------------------------------------------------------------------------- small modules
MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 80


SIZED = ("backend", "components", "bench")  # and app.py


def oversized(root: Path, dirs: tuple[str, ...] = SIZED) -> tuple[list[str], list[str]]:
    """(files over MAX_FILE_LINES, functions over MAX_FUNCTION_LINES) in backend/, components/, bench/, app.py."""
    big_files, big_functions = [], []
    paths = [p for d in dirs for p in sorted((root / d).rglob("*.py"))] + [root / "app.py"]
    for path in paths:
        if not path.exists():
            continue
        text = path.read_text()
        if text.count("\n") > MAX_FILE_LINES:
            big_files.append(f"{path.relative_to(root)} ({text.count(chr(10))} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    big_functions.append(f"{path.relative_to(root)}:{node.name} ({length} lines)")
    return big_files, big_functions


def test_files_and_functions_stay_small():
    """A module over 450 lines or a function over 80 holds more than one job: split it."""
    assert oversized(ROOT) == ([], [])


def test_the_size_check_fails_on_planted_violations(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(85))
    root = _plant(tmp_path, {"app.py": "", "components/tab/ui.py": "def build():\n" + body,
                             "bench/big.py": "x = 1\n" * 460, "backend/ok.py": "x = 1\n"})
    files, functions = oversized(root, ("backend", "components", "bench"))
    assert files == ["bench/big.py (460 lines)"] and functions == ["components/tab/ui.py:build (86 lines)"]


# ----------------------------------------------------------------------------- the whole repository
CODE = ("backend", "components", "bench", "scripts", "tests")


def repo_graph(root: Path) -> dict[str, set[str]]:
    """module -> the repository modules it imports, for every .py file in CODE and app.py; a
    `from pkg import sub` names the submodule; a package's __init__ counts as the package."""
    paths = [p for d in CODE for p in (root / d).rglob("*.py")] + [p for p in [root / "app.py"] if p.exists()]
    files = {module_name(root, p): p for p in paths}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in files]
                deps.update(subs)
                if len(subs) < len(node.names):
                    deps.add(node.module)
        graph[mod] = {d for d in deps if d in files and d != mod}
    return graph


def test_the_repository_has_no_import_cycle():
    """components, bench, tests and app.py included (a package importing its own submodules from
    its __init__ is not a cycle unless a submodule imports the package back)."""
    assert cycles(repo_graph(ROOT)) == []


def test_the_repository_cycle_check_fails_on_a_planted_cycle(tmp_path):
    root = _plant(tmp_path, {"app.py": "", "bench/__init__.py": "", "bench/load.py": "from bench import batching\n",
                             "bench/batching.py": "def f():\n    from bench.load import g\n"})
    assert cycles(repo_graph(root)) == [["bench.batching", "bench.load"]]


# ----------------------------------------------------------------------------- the UI: tab packages on a shell
SHELL = "shell"


def component_violations(root: Path) -> list[str]:
    """components/ is tab packages plus the shell: no loose modules, no tab imports another tab,
    the shell imports no tab."""
    bad = [f"{p.relative_to(root)} is not in a package" for p in sorted((root / "components").glob("*.py"))
           if p.name != "__init__.py"]
    for path in sorted((root / "components").rglob("*.py")):
        rel = path.relative_to(root / "components").parts
        if len(rel) < 2:
            continue
        own = rel[0]
        for mod in imported_modules(path):
            parts = mod.split(".")
            if parts[0] == "components" and len(parts) > 1 and parts[1] not in (own, SHELL):
                bad.append(f"components/{'/'.join(rel)} ({own}) imports {mod}")
    return sorted(set(bad))


def test_components_are_tab_packages_on_one_shell():
    assert component_violations(ROOT) == []


def test_the_component_check_fails_on_planted_violations(tmp_path):
    root = _plant(tmp_path, {"components/loose.py": "", "components/train/ui.py": "from components.search import ui\n",
                             "components/shell/links.py": "def f():\n    from components.train import ui\n",
                             "components/search/ui.py": "from components.shell import notice\n"})
    assert component_violations(root) == [
        "components/loose.py is not in a package",
        "components/shell/links.py (shell) imports components.train",
        "components/shell/links.py (shell) imports components.train.ui",
        "components/train/ui.py (train) imports components.search",
        "components/train/ui.py (train) imports components.search.ui"]


# Gradio's private internals are touched in one module, each patch tested (test_gradio_patches.py).
GRADIO_INTERNALS = re.compile(r"\._queue\b|event_ids_to_events|active_jobs|SessionState|LocalContext|"
                              r"GradioMultiPartParser|_format_processing_error|\.validate_inputs\b|"
                              r"\.preprocess_data\b|event_queue_per_concurrency_id|gr\.context\b|gradio\.context\b|"
                              r"\.fns\b|get_function_params|\bspecial_args\b|\._id\b|"
                              r"gradio\.(utils|helpers|data_classes|networking|route_utils)\b")
PATCHES = "components/shell/gradio_patches.py"


def gradio_internal_uses(root: Path) -> list[str]:
    paths = sorted((root / "components").rglob("*.py")) + [root / "app.py"]  # the backend never imports gradio
    return [f"{p.relative_to(root)}:{i}" for p in paths if p.exists() and str(p.relative_to(root)) != PATCHES
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if GRADIO_INTERNALS.search(line.split("#")[0])]


def test_gradio_internals_are_touched_in_one_module():
    assert gradio_internal_uses(ROOT) == []


def test_the_gradio_internals_check_fails_on_a_planted_use(tmp_path):
    root = _plant(tmp_path, {"app.py": "", "components/shell/gradio_patches.py": "q = demo._queue\n",
                             "components/train/ui.py": "x = 1\nevents = demo._queue.event_ids_to_events\n"})
    assert gradio_internal_uses(root) == ["components/train/ui.py:2"]


def test_the_gradio_internals_check_sees_the_page_being_built_and_event_internals(tmp_path):
    root = _plant(tmp_path, {"app.py": "", "components/search/ui.py": "tab = gr.context.Context.block\n",
                             "components/why/ui.py": "ok = 1\nids = [b._id for b in demo.fns]\n"})
    assert gradio_internal_uses(root) == ["components/search/ui.py:1", "components/why/ui.py:2"]


# An endpoint is one declaration (components/shell/endpoint.py): a tab declares, the shell wires.
WIRING = re.compile(r"api_name=|\buser_errors\b|\bclear_on_error\b|lifecycle\.after\(|runs\.track\(|links\.register\(|"
                    r"\bplanned\(|code_view\.attach\(|\bgr\.api\(")


def tab_lines_matching(root: Path, pattern: re.Pattern) -> list[str]:
    """'path:line' of each tab module line (outside components/shell, comments left out) that `pattern` finds."""
    paths = sorted(p for p in (root / "components").rglob("*.py") if p.parent.name != "shell")
    return [f"{p.relative_to(root)}:{i}" for p in paths
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line.split("#")[0])]


def tab_wiring_calls(root: Path) -> list[str]:
    return tab_lines_matching(root, WIRING)


def test_tabs_declare_their_endpoints_and_never_wire_them():
    assert tab_wiring_calls(ROOT) == []


def test_the_wiring_check_fails_on_a_planted_call(tmp_path):
    root = _plant(tmp_path, {"components/shell/endpoint.py": "clear_on_error(ev, outs, box)\n",
                             "components/train/ui.py": "x = 1\nev = go.click(f, [a], [b], api_name='train')\n"})
    assert tab_wiring_calls(root) == ["components/train/ui.py:2"]


# A tab's multi-choice input is the shell's CheckboxGroup, which lets the handler refuse a wrong value in its
# own words (Gradio's own check answers "Value: 'x' ... is not in the list of choices", naming no parameter).
RAW_CHOICES = re.compile(r"\bgr\.CheckboxGroup\(")


def raw_choice_inputs(root: Path) -> list[str]:
    return tab_lines_matching(root, RAW_CHOICES)


def test_tabs_take_the_shells_checkbox_group():
    assert raw_choice_inputs(ROOT) == []


def test_the_checkbox_group_check_fails_on_a_planted_use(tmp_path):
    root = _plant(tmp_path, {"components/shell/widgets.py": "class CheckboxGroup(gr.CheckboxGroup(\n",
                             "components/multilingual/live.py": "x = 1\nbox = gr.CheckboxGroup(['de'])\n"})
    assert raw_choice_inputs(root) == ["components/multilingual/live.py:2"]
