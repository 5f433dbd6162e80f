"""A snippet as a Jupyter notebook (nbformat, a maintained writer): a markdown cell naming the run and
linking the book chapter's own notebook, a cell holding the learner's inputs as Python literals, the files the
app ships that the run read (written next to the notebook by its own cell), the snippet, the client call.

A notebook runs where it is saved: the models come from their pip packages or the documented cache place (as
the snippets load them), and a shipped file the snippet opens (`assets/...`) is in the notebook itself.

`notebook_file` writes it into a new download folder of the requesting address (`downloads.new_folder`): an
address keeps its notebooks up to `KEEP_BYTES` together, the oldest going first, so that a tab's Download still
works after runs in other tabs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from backend.runtime import config, downloads
from backend.snippets.text import file_name

KIND = "notebook"
KEEP_BYTES = 4 * 2**20  # an address's notebooks together (a search on the glossary: ~90 KB; most runs: a few KB)
ASSETS = Path(__file__).resolve().parents[2] / "assets"  # what the app ships, in its repository
SHIPPED = re.compile(r"""(['"])(assets/[^'"\s]+)\1""")  # a quoted path under assets/ in a snippet
PLACEHOLDER = re.compile(r"\{(\w*)\}")  # `{split}` in a path the snippet formats
# What a notebook may print in red that is not an error, said where a reader meets it first
STDERR_NOTE = ["# Loading a model, transformers prints progress bars (\"Loading weights\") on stderr. In Jupyter without",
               "# ipywidgets, tqdm first warns \"TqdmWarning: IProgress not found\": harmless, the bars print as text",
               "# (pip install ipywidgets draws them as widgets)."]
APP_IMPORT = re.compile(r"^from backend[.\w]* import |^import backend", re.M)  # a snippet using the app's code
WORD = re.compile(r"""['"]([\w.-]+)['"]""")  # the quoted words that may fill a placeholder


def literal(value, indent: int = 0) -> str:
    """`value` as Python source that evaluates to it: repr for scalars and strings (True, None, the float's
    exact digits, any character escaped as needed), `float('nan')`/`float('inf')` where repr would be a bare
    name, nested dicts and lists one item a line; anything else (a path, a number type of a library) as the
    string it prints as."""
    pad, inner = " " * indent, " " * (indent + 4)
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({repr(value)!r})"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{literal(k if isinstance(k, (str, int, float, bool)) or k is None else str(k))}: "
                 f"{literal(v, indent + 4)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]" if isinstance(value, list) else "()"
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        return open_ + "\n" + "\n".join(f"{inner}{literal(v, indent + 4)}," for v in value) + f"\n{pad}{close}"
    return repr(str(value))


def shipped_files(python: str, root: Path = ASSETS) -> dict[str, str]:
    """{path: text} of every file the app ships that `python` opens: its quoted `assets/...` paths, a `{name}`
    placeholder matched by the words the code quotes (`read("train"), read("test")` reads those two splits)."""
    words = {m.group(1) for m in WORD.finditer(python)}
    found: dict[str, str] = {}
    for m in SHIPPED.finditer(python):
        pattern = m.group(2)
        fill = "(?:" + "|".join(re.escape(w) for w in sorted(words)) + ")" if words else "(?!)"
        parts = PLACEHOLDER.split(pattern)  # literal, name, literal, name, ...
        rx = re.compile("".join(re.escape(p) if i % 2 == 0 else fill for i, p in enumerate(parts)) + r"\Z")
        fixed = parts[0].rsplit("/", 1)[0]  # the folder before any placeholder
        base = root.parent / fixed
        for path in sorted(base.rglob("*")) if base.is_dir() else ():
            rel = path.relative_to(root.parent).as_posix()
            if path.is_file() and rx.match(rel):
                found[rel] = path.read_text(encoding="utf-8")
    return found


def data_cell(files: dict[str, str]) -> str:
    """A cell that writes the shipped files next to the notebook, line by line as the app ships them."""
    out = ["# The files of the app's repository that the run read, as it ships them: written next to this",
           "# notebook, so that the code below finds them wherever the notebook is saved.",
           "from pathlib import Path", "", "shipped = {}"]
    for name, text in files.items():
        lines = text.splitlines(keepends=True)
        out += [f"shipped[{name!r}] = \"\".join(["] + [f"    {line!r}," for line in lines] + ["])"]
    out += ["for name, text in shipped.items():",
            "    path = Path(name)",
            "    path.parent.mkdir(parents=True, exist_ok=True)",
            '    path.write_text(text, encoding="utf-8")']
    return "\n".join(out)


def checkout_cell() -> str:
    """A cell that puts a checkout of the app on `sys.path`: TLAB_CHECKOUT's, else (where the server is the
    learner's own, not a public one whose paths are its own business) the checkout that made the run."""
    fallback = "." if config.public_mode() else str(ASSETS.parent)
    return "\n".join([
        "# TLAB_CHECKOUT: a checkout of Transformers Lab (git clone it; its requirements.txt has the libraries)",
        "import os", "import sys", "from pathlib import Path", "",
        f"checkout = Path(os.environ.get(\"TLAB_CHECKOUT\") or {fallback!r})",
        'if not (checkout / "backend" / "engines").is_dir():',
        '    raise RuntimeError(f"No Transformers Lab checkout at {checkout}: set TLAB_CHECKOUT to one")',
        "sys.path.insert(0, str(checkout))"])


def notebook(snippet: dict, inputs: dict, chapter_title: str = "", chapter_url: str = "") -> nbformat.NotebookNode:
    """The notebook for one snippet (see module doc); validated before it is returned."""
    head = [f"# The same in Python: `/{snippet.get('endpoint', '')}`",
            "This notebook reproduces one run of Transformers Lab with the library's own calls."]
    if chapter_url:
        head.append(f"The book's chapter: [{chapter_title or chapter_url}]({chapter_url}) (its notebook).")
    shown = {k: file_name(v) if k == "file" else v for k, v in (inputs or {}).items() if v not in (None, "")}
    python = snippet.get("python", "").rstrip("\n")
    cells = [new_markdown_cell("\n\n".join(head)),
             new_markdown_cell("The inputs of the run (for reference; the code below already holds them):"),
             new_code_cell("\n".join([*STDERR_NOTE, "inputs = " + literal(shown)]))]
    files = shipped_files(python)
    if files:  # the page's snippet says where a checkout holds them; here the data cell above the code does
        python = python.replace("run from a checkout)", "written next to this notebook by its data cell)")
        cells += [new_markdown_cell(f"The data the run used ({', '.join(f'`{n}`' for n in files)}), "
                                    "from the app's repository:"),
                  new_code_cell(data_cell(files), metadata={"jupyter": {"source_hidden": True}})]
    if APP_IMPORT.search(python):
        cells += [new_markdown_cell("The code below imports the app's own modules (read as source): a checkout of "
                                    "Transformers Lab, named by `TLAB_CHECKOUT`:"),
                  new_code_cell(checkout_cell())]
    cells += [new_code_cell(python),
              new_markdown_cell("The same endpoint through `gradio_client`, with the same arguments (the app must be "
                                "running at the address below), printing its JSON as the cell above prints its result:"),
              new_code_cell(snippet.get("client", "").rstrip("\n"))]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nbformat.validate(nb)
    return nb


def notebook_file(snippet: dict, inputs: dict, root, chapter_title: str = "", chapter_url: str = "") -> Path:
    """Write the notebook into a new download folder of this address; -> its path."""
    nb = notebook(snippet, inputs, chapter_title, chapter_url)
    text = nbformat.writes(nb)
    folder = downloads.new_folder(root, KIND, len(text.encode()), keep_bytes=KEEP_BYTES)
    path = folder / f"{snippet.get('endpoint') or 'run'}.ipynb"
    path.write_text(text, encoding="utf-8")
    return path
