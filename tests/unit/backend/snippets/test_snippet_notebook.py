"""A run's notebook as a learner runs it (backend/snippets/notebook.py): the inputs cell is Python that gives
back the inputs whatever they hold, and a shipped file the snippet opens is in the notebook itself."""

from __future__ import annotations

import contextlib
import importlib
import io
import math
import os
import sys

import pytest

from backend import snippets
nb_module = importlib.import_module("backend.snippets.notebook")  # the package exports its function of that name

HOSTILE = {
    "text": "It's \"quoted\"\nnew line\ttab \\ backslash '''triple''' \"\"\" {braces} %s",
    "surrogate": "lone \udfff and \ud800 surrogates, \x00 nul, \u202e bidi, emoji \U0001F600",
    "batch": True, "multi": False, "nothing": None, "zero": 0, "big": 10**30,
    "float": 0.1 + 0.2, "tiny": 5e-324, "negative_zero": -0.0,
    "nan": float("nan"), "inf": float("inf"), "minus_inf": float("-inf"),
    "nested": {"list": [1, [2, {"deep": "x\ny"}], (3, "four")], "empty": {}, "none": [None], 7: "int key"},
    "empty_list": [], "empty_tuple": (),
}


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_the_inputs_cell_gives_back_hostile_inputs_exactly():
    nb = snippets.notebook({"endpoint": "classify", "python": "print(1)", "client": ""}, HOSTILE)
    cell = next(c.source for c in nb.cells if "\ninputs = " in c.source)
    namespace: dict = {}
    exec(compile(cell, "inputs", "exec"), namespace)  # a notebook cell, run as Jupyter runs it
    given = {k: v for k, v in HOSTILE.items() if v is not None}  # an input left empty is left out
    assert _same(namespace["inputs"], given)
    assert "false" not in cell and "null" not in cell  # JSON's words would be NameErrors
    cell.encode("utf-8")  # lone surrogates escaped: the file can be written


def test_an_odd_value_is_its_text_and_the_server_copy_of_an_upload_its_name():
    nb = snippets.notebook({"endpoint": "build_index", "python": "", "client": ""},
                           {"file": "/tmp/gradio/abc/reviews.csv", "path": os.path, "empty": ""})
    namespace: dict = {}
    exec(next(c.source for c in nb.cells if "\ninputs = " in c.source), namespace)
    assert namespace["inputs"] == {"file": "reviews.csv", "path": str(os.path)}


def test_a_shipped_file_the_snippet_opens_is_written_by_the_notebook(tmp_path, monkeypatch):
    result = {"query": "q", "k": 3, "corpus": "glossary", "results": [],
              "index_settings": {"kind": "flat", "embedder": "x", "max_length": 256},
              "model": {"checkpoint": "x/y", "source": "hub"}}
    snip = snippets.for_result("search", {"query": "q", "k": 3}, result)
    nb = snippets.notebook(snip, {"query": "q"})
    data = next(c for c in nb.cells if "shipped = {}" in c.source)
    monkeypatch.chdir(tmp_path)  # an empty folder, as a learner's downloads
    exec(data.source, {})
    glossary = nb_module.ASSETS / "corpus" / "glossary.jsonl"
    assert (tmp_path / "assets/corpus/glossary.jsonl").read_bytes() == glossary.read_bytes()
    assert "search', index_type='flat'" not in snip["client"]  # the build comes first: its own call
    client = snip["client"]
    assert client.index("api_name='/build_index'") < client.index("api_name='/search'")


def test_a_formatted_path_takes_the_splits_the_code_names():
    code = 'def read(split):\n    return open(f"assets/data/ner/{split}.jsonl").read()\ntrain, test = read("train"), read("test")'
    assert sorted(nb_module.shipped_files(code)) == ["assets/data/ner/test.jsonl", "assets/data/ner/train.jsonl"]
    assert nb_module.shipped_files("text = 'no file here'") == {}


def test_a_snippet_of_the_apps_own_code_finds_a_checkout_by_its_variable(monkeypatch, tmp_path):
    snip = snippets.for_result("train_gpt", {"corpus": "glossary"}, {"settings": {"steps": 30}})
    nb = snippets.notebook(snip, {"corpus": "glossary"})
    cell = next(c.source for c in nb.cells if "TLAB_CHECKOUT" in c.source and c.cell_type == "code")
    monkeypatch.setenv("TLAB_CHECKOUT", str(tmp_path))  # not a checkout: said, not an ImportError later
    with pytest.raises(RuntimeError, match="No Transformers Lab checkout"):
        exec(cell, {})
    monkeypatch.setenv("TLAB_CHECKOUT", str(nb_module.ASSETS.parent))
    monkeypatch.setattr(sys, "path", list(sys.path))
    exec(cell, {})
    assert sys.path[0] == str(nb_module.ASSETS.parent)
    plain = snippets.notebook(snippets.for_result("tokenize", {"text": "x"}, {"text": "x", "results": {}}), {})
    assert not any("TLAB_CHECKOUT" in c.source for c in plain.cells)  # the library's own calls need no checkout


def test_the_client_cell_prints_the_runs_json_in_the_library_cells_words():
    """The client cell's lines, run on a result as the endpoint returns it, print what the library cell prints."""
    result = {"tokens": ["Angela", "Merkel", "besuchte", "Paris"], "tags": ["B-PER", "I-PER", "O", "B-LOC"]}
    client = snippets.for_result("multilingual_ner", {"text": "x"}, {**result, "model": {}}, result_at=1)["client"]
    shown = client[client.index("found = "):]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(shown, {"result": ("markdown", result)})
    assert out.getvalue() == str(list(zip(result["tokens"], result["tags"]))) + "\n"  # the library's print(...)
    decode = snippets.for_result("decode", {"prompt": "Once"}, {"outputs": [{"text": " upon"}], "settings": {}})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(decode["client"][decode["client"].index("found = "):], {"result": {"outputs": [{"text": " upon"}]}})
    assert out.getvalue() == "' upon'\n"
