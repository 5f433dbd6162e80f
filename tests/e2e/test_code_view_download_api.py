"""The notebook a run's code view offers runs as downloaded and gives the page's result back (the code view's
"Download as a notebook", components/shell/code_view.py). For one family of each kind (a FAISS index built and
searched, generation, a tokenizer, a classifier trained here), a real run goes through the lane's app; the page's
own code-view function writes the notebook it would offer for that run (endpoints declared as app.py's page
declares them); the notebook is copied into an empty folder and executed there by nbclient (a maintained
executor), offline, with the repository off the kernel's path: its library cell and its gradio_client cell (which
calls the lane's app) must both print the page's result."""

from __future__ import annotations

import ast
import os
import re
import shutil
import time

import nbformat
import pytest
from gradio_client import Client
from nbclient import NotebookClient
from nbclient.util import run_sync

QUERY, PROMPT, TEXT = "make a model smaller", "The book teaches", "Great book, fast delivery.\nThe parcel arrived broken."
TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def writer(app_url, monkeypatch_module):
    """The code view's notebook writer, with the endpoints declared as the page declares them (their JSON's
    place among the outputs a script gets back) and the lane's app as the address a page would name."""
    monkeypatch_module.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch_module.setenv("TLAB_PROFILE", "local")
    from app import build_app
    from components.shell import code_view

    build_app(tabs=["search", "decoding", "tokenizers", "pipelines"])
    monkeypatch_module.setattr(code_view, "client_url", lambda: app_url)
    return code_view


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def kernel():
    """One Python kernel for the module's notebooks (each start imports the libraries anew: ~6 s), started by the
    first notebook's client and shut down after the last. Before each notebook the harness empties the kernel's
    namespace (a name one notebook defined cannot help the next) and moves it into that notebook's empty folder."""
    held: dict = {}
    yield held
    if held.get("km") is not None:
        run_sync(held["km"].shutdown_kernel)(now=True)


HARNESS = "%reset -f\nimport os\nos.chdir({folder!r})\ndel os"  # not the notebook's: dropped before reading it


def _execute(notebook_path: str, folder, kernel: dict) -> list[tuple[str, str]]:
    """Run the downloaded notebook in `folder` (empty but for it) as Jupyter runs it -> each code cell's
    (stdout, stderr); a cell that raised fails the test."""
    folder.mkdir(exist_ok=True)
    assert not list(folder.iterdir())
    target = folder / os.path.basename(notebook_path)
    shutil.copy(notebook_path, target)
    nb = nbformat.read(str(target), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(HARNESS.format(folder=str(folder))))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the repository stays off the kernel's path
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    started = time.monotonic()
    client = NotebookClient(nb, timeout=300, kernel_name="python3", km=kernel.get("km"))
    client.execute(env=env, cwd=str(folder), cleanup_kc=False)
    kernel["km"] = client.km
    client.kc.stop_channels()
    TIMES[target.name] = round(time.monotonic() - started, 1)
    nb.cells.pop(0)
    outs = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, errors
        outs.append(tuple("".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == stream)
                          for stream in ("stdout", "stderr")))
    source = "\n".join(c.source for c in nb.cells)
    for _, err in outs:  # what a learner sees in red: progress bars, and warnings the notebook explains in a comment
        assert "LOAD REPORT" not in err, err[-2000:]
        for warning in set(re.findall(r"\b(\w+Warning)\b", err)):
            assert re.search(rf"#.*\b{warning}\b", source), err[-2000:]
    return outs


def _printed(outs, shape: str) -> tuple[list[str], list[str]]:
    """The lines of the library cell and of the client cell that have the result's shape (gradio_client says
    "Loaded as API" first)."""
    rx = re.compile(shape)
    library, remote = outs[-2][0], outs[-1][0]
    return ([l for l in library.splitlines() if rx.match(l)], [l for l in remote.splitlines() if rx.match(l)])


def test_the_search_notebook_builds_the_same_index_and_finds_the_same_passages(writer, app_url, tmp_path, kernel):
    client = Client(app_url, verbose=False)
    client.predict(choice="glossary", index_type="flat", embedder="minilm", api_name="/build_index")
    result = client.predict(query=QUERY, k=4, api_name="/search")[2]
    ids, scores = [h["id"] for h in result["results"]], [h["score"] for h in result["results"]]
    _, _, path = writer.written("search", {"query": QUERY, "k": 4}, result)
    library, remote = _printed(_execute(path, tmp_path / "nb", kernel), r"-?\d+\.\d+ \d+ ")
    rows = [line.split(" ", 2) for line in library]
    assert [int(r[1]) for r in rows] == ids, library
    assert [float(r[0]) for r in rows] == pytest.approx(scores, abs=2e-4), library
    assert remote == library  # the client cell prints the page's result in the library cell's words


def test_the_decode_notebook_generates_the_same_text(writer, app_url, tmp_path, kernel):
    client = Client(app_url, verbose=False)
    settings = {"strategy": "beam", "num_beams": 3, "max_new_tokens": 8, "num_return_sequences": 2}
    result = client.predict(prompt=PROMPT, settings=settings, api_name="/decode")
    _, _, path = writer.written("decode", {"prompt": PROMPT}, result)
    library, remote = _printed(_execute(path, tmp_path / "nb", kernel), r"['\"]")
    assert [ast.literal_eval(line) for line in library] == [o["text"] for o in result["outputs"]]
    assert remote == library


def test_the_tokenize_and_classify_notebooks_give_the_same_tokens_and_scores(writer, app_url, tmp_path, kernel):
    client = Client(app_url, verbose=False)
    *_, tokens = client.predict(text="Tokenizing naïve text!", special=True, api_name="/tokenize")
    _, _, path = writer.written("tokenize", {"text": "Tokenizing naïve text!", "special": True}, tokens)
    library, remote = _printed(_execute(path, tmp_path / "tok", kernel), r"(encoder|decoder|\w+) \[")
    roles = [role for role, r in tokens["results"].items() if "error" not in r]
    assert [line.split(" ", 1)[0] for line in library] == roles
    for role, line in zip(roles, library):
        assert f"] {tokens['results'][role]['ids']} [" in line, line
    assert remote == library
    result = client.predict(text=TEXT, batch=True, api_name="/classify")[3]
    _, _, path = writer.written("classify", {"text": TEXT, "batch": True}, result)
    library, remote = _printed(_execute(path, tmp_path / "cls", kernel), r"\[\(")
    for printed in (library, remote):
        assert len(printed) == len(result["results"]), printed
        for row, r in zip(printed, result["results"]):
            pairs = ast.literal_eval(row[:row.rindex("]") + 1])
            assert [p[0] for p in pairs] == r["labels"], row
            assert [p[1] for p in pairs] == pytest.approx(r["scores"], abs=1e-4), row
            assert row.endswith(r["sequence"][:40])
    print("notebook seconds:", TIMES)
