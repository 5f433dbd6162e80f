"""A snippet as a Jupyter notebook (nbformat, a maintained writer): a markdown cell naming the run and
linking the book chapter's own notebook, a cell holding the learner's inputs, the snippet, the client call.

`notebook_file` writes it into a fresh download folder of the requesting address
(`downloads.new_folder`: one per address and kind, refused when the folder is full)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from backend.runtime import downloads
from backend.snippets.text import file_name

KIND = "notebook"


def notebook(snippet: dict, inputs: dict, chapter_title: str = "", chapter_url: str = "") -> nbformat.NotebookNode:
    """The notebook for one snippet (see module doc); validated before it is returned."""
    head = [f"# The same in Python: `/{snippet.get('endpoint', '')}`",
            "This notebook reproduces one run of Transformers Lab with the library's own calls."]
    if chapter_url:
        head.append(f"The book's chapter: [{chapter_title or chapter_url}]({chapter_url}) (its notebook).")
    shown = {k: file_name(v) if k == "file" else v for k, v in (inputs or {}).items() if v not in (None, "")}
    cells = [new_markdown_cell("\n\n".join(head)),
             new_markdown_cell("The inputs of the run (for reference; the code below already holds them):"),
             new_code_cell("inputs = " + json.dumps(shown, indent=2, ensure_ascii=False, default=str)),
             new_code_cell(snippet.get("python", "").rstrip("\n")),
             new_markdown_cell("The same endpoint through `gradio_client`, with the same arguments:"),
             new_code_cell(snippet.get("client", "").rstrip("\n"))]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nbformat.validate(nb)
    return nb


def notebook_file(snippet: dict, inputs: dict, root, chapter_title: str = "", chapter_url: str = "") -> Path:
    """Write the notebook into a new download folder of this address; -> its path."""
    nb = notebook(snippet, inputs, chapter_title, chapter_url)
    text = nbformat.writes(nb)
    path = downloads.new_folder(root, KIND, len(text.encode())) / f"{snippet.get('endpoint') or 'run'}.ipynb"
    path.write_text(text, encoding="utf-8")
    return path
