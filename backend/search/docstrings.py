"""The "API docs" corpus: docstrings of the installed libraries, one passage per object.

Read with `ast` from the source files, never by importing the modules (importing every
transformers model would take minutes and run arbitrary code). Bounded in time and count,
public names only, and cached as JSONL keyed by the library versions.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import time
from typing import Callable

from backend.search.corpora import Corpus, Passage
from backend.search.index import atomic_write_bytes

# (import name, distribution name, ((folder or file, most passages from it), ...)). Order = priority:
# what this app teaches first (transformers' pipelines, tokenizers and generation; torch.nn), then
# the index library, then the tools around them. Each part is capped, so no one folder (transformers'
# continuous batching had 226 entries, numpy's distutils 58) crowds out the APIs a learner looks up.
# "" is the package's top-level files plus its public subfolders.
LIBRARIES: tuple[tuple[str, str, tuple[tuple[str, int], ...]], ...] = (
    ("faiss", "faiss-cpu", (("", 60),)),
    ("transformers", "transformers", (
        ("pipelines", 110), ("tokenization_utils_base.py", 30), ("tokenization_utils_tokenizers.py", 10),
        ("generation/configuration_utils.py", 15), ("generation/utils.py", 15),
        ("generation/logits_process.py", 25), ("generation/stopping_criteria.py", 8),
        ("generation/streamers.py", 8), ("modeling_utils.py", 30), ("configuration_utils.py", 10),
        ("trainer.py", 15), ("training_args.py", 5), ("models/auto", 20), ("models/bert", 8),
        ("models/gpt2", 6), ("models/distilbert", 5), ("models/t5", 5), ("models/bart", 5),
    )),
    ("torch", "torch", (
        ("nn/modules", 80), ("nn/functional.py", 45), ("nn/init.py", 8), ("nn/utils", 15),
        ("optim", 25), ("utils/data", 25),
    )),
    ("tokenizers", "tokenizers", (("", 35),)),
    ("safetensors", "safetensors", (("", 16),)),
    ("gradio", "gradio", (("components", 20), ("blocks.py", 10), ("interface.py", 5))),
    ("numpy", "numpy", (("lib", 10), ("linalg", 5), ("random", 5))),
)
SKIP_DIRS = {"tests", "test", "testing", "_vendor", "vendored", "benchmarks", "__pycache__",
             "templates", "node_modules", "_C", "_inductor", "_dynamo", "onnx", "fx", "jit",
             "distributed", "_functorch", "_export", "export", "ao", "backends", "cuda",
             "mps", "xpu", "_refs", "_prims", "_decomp", "testing", "commands", "_custom_op",
             "continuous_batching", "distutils", "f2py", "mcp"}
# The caps add up to ~750, and parts run short, so the corpus has about 640 passages (3,364 uncapped):
# embedded in ~30 s at the ~20 passages/s of a 2-core CPU (a basic CPU Space), well inside the
# 120 s request budget, and once only (the vectors persist in the cache dir; see service.py).
MAX_ENTRIES = 800
MAX_SECONDS = 20.0
MAX_DOC_CHARS = 500
MIN_DOC_CHARS = 30

ProgressFn = Callable[[float, str], None]
_SECTION = re.compile(r"\s(?:Args|Arguments|Parameters|Returns|Raises|Examples?|See Also|"
                      r"Keyword args|Note)\s*:?\s*-*\s(?=\S)")


def _versions() -> dict[str, str]:
    out = {}
    for mod, dist, _ in LIBRARIES:
        try:
            out[mod] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _package_dir(mod: str) -> str | None:
    spec = importlib.util.find_spec(mod)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _summary(doc: str) -> str:
    """First paragraph(s) of a docstring, whitespace-collapsed, at most MAX_DOC_CHARS."""
    doc = doc.strip()
    paras = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
    text = ""
    for p in paras:
        if p.lower().rstrip(":") in ("args", "arguments", "parameters", "returns", "example",
                                       "examples", "raises", "note") or p.startswith((">>>", "```")):
            break
        text = f"{text} {p}".strip()
        if len(text) >= 200:
            break
    text = _SECTION.split(text, maxsplit=1)[0].strip()
    if len(text) > MAX_DOC_CHARS:
        text = text[:MAX_DOC_CHARS].rsplit(" ", 1)[0] + " ..."
    return text


def _iter_files(root: str, subdirs: tuple[str, ...], seen: set | None = None):
    seen = set() if seen is None else seen
    for sub in subdirs or ("",):
        base = os.path.join(root, sub) if sub else root
        if os.path.isfile(base) and base.endswith(".py"):
            if base not in seen:
                seen.add(base)
                yield base
            continue
        if not os.path.isdir(base):
            continue
        if sub == "":
            walker = [(base, [], sorted(f for f in os.listdir(base)))]  # top level files only
            walker += [(d, [], sorted(os.listdir(d))) for d in _subdirs(base)]
        else:
            walker = os.walk(base)
        for dirpath, dirnames, filenames in walker:
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for fn in sorted(filenames):
                path = os.path.join(dirpath, fn)
                if fn.endswith(".py") and path not in seen and os.path.isfile(path):
                    seen.add(path)
                    yield path


def _subdirs(base: str) -> list[str]:
    out = []
    for d in sorted(os.listdir(base)):
        p = os.path.join(base, d)
        if os.path.isdir(p) and d not in SKIP_DIRS and not d.startswith((".", "_")) and d != "models":
            out.append(p)
    return out


def _module_name(mod: str, root: str, path: str) -> str:
    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    if rel.endswith("__init__"):
        rel = rel[: -len("__init__")].rstrip(".")
    return f"{mod}.{rel}" if rel else mod


def _entries_from_file(path: str, modname: str) -> list[tuple[str, str]]:
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
        return []
    out = []
    if any(part.startswith("_") for part in modname.split(".")[1:]):
        return []
    doc = ast.get_docstring(tree)
    if doc:
        out.append((modname, "module", doc))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name.startswith("_"):
                continue
            d = ast.get_docstring(node)
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            if d:
                out.append((f"{modname}.{node.name}", kind, d))
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                            not sub.name.startswith("_"):
                        sd = ast.get_docstring(sub)
                        if sd:
                            out.append((f"{modname}.{node.name}.{sub.name}", "method", sd))
    return [(q, f"({k}) {s}") for q, k, d in out if len(s := _summary(d)) >= MIN_DOC_CHARS]


def collect_docstrings(max_entries: int = MAX_ENTRIES, max_seconds: float = MAX_SECONDS,
                       progress: ProgressFn | None = None) -> tuple[list[Passage], list[str]]:
    """Walk the libraries' parts in priority order, each up to its cap (scaled down when
    `max_entries` is below the caps' sum); stop at max_entries or max_seconds."""
    t0 = time.perf_counter()
    passages: list[Passage] = []
    seen_text: set[str] = set()
    notes = []
    total_caps = sum(cap for _, _, parts in LIBRARIES for _, cap in parts)
    scale = min(1.0, max_entries / max(1, total_caps))
    for li, (mod, _dist, parts) in enumerate(LIBRARIES):
        root = _package_dir(mod)
        if root is None:
            continue
        count = 0
        seen_files: set[str] = set()
        for sub, cap in parts:
            quota, taken = max(1, round(cap * scale)), 0
            for path in _iter_files(root, (sub,), seen_files):
                if time.perf_counter() - t0 > max_seconds:
                    notes.append(f"Stopped after {max_seconds:.0f} s of reading source files.")
                    return passages, notes
                for qual, text in _entries_from_file(path, _module_name(mod, root, path)):
                    if text in seen_text:
                        continue
                    seen_text.add(text)
                    passages.append(Passage(qual, text))
                    taken += 1
                    if taken >= quota or len(passages) >= max_entries:
                        break
                if taken >= quota or len(passages) >= max_entries:
                    break
            count += taken
            if len(passages) >= max_entries:
                break
        if progress is not None:
            progress(0.05 * (li + 1) / len(LIBRARIES), f"Read docstrings of {mod} ({count})")
        if len(passages) >= max_entries:
            break
    return passages, notes


def docstring_corpus(cache_dir: str, max_entries: int = MAX_ENTRIES,
                     max_seconds: float = MAX_SECONDS, progress: ProgressFn | None = None) -> Corpus:
    """Cached per library versions + limits; generated on first use."""
    versions = _versions()
    key = hashlib.sha256(json.dumps([versions, max_entries, MAX_DOC_CHARS, LIBRARIES], sort_keys=True)
                         .encode()).hexdigest()[:12]
    path = os.path.join(cache_dir, f"docstrings-{key}.jsonl")
    desc = ", ".join(f"{m} {v}" for m, v in versions.items())
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                rows = [json.loads(line) for line in f if line.strip()]
            passages = [Passage(r["title"], r["text"]) for r in rows]
            if len(passages) >= 2:
                return Corpus("docstrings", passages, [f"Docstrings of {desc} (cached)."],
                              len(passages))
        except (ValueError, KeyError, OSError):
            pass
    passages, notes = collect_docstrings(max_entries, max_seconds, progress)
    data = "".join(json.dumps({"title": p.title, "text": p.text}) + "\n" for p in passages)
    atomic_write_bytes(path, data.encode("utf-8"))
    return Corpus("docstrings", passages, [f"Docstrings of {desc}."] + notes, len(passages))
