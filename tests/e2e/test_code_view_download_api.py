"""The notebook a run's code view offers runs as downloaded and gives the page's result back (the code view's
"Download as a notebook", components/shell/code_view.py), for Search (a FAISS index built, then searched),
Decoding (beam search, two sequences), Tokenizers and Classify: a real run goes through the lane's app; the
page's own code-view function writes the notebook it would offer for that run; the notebook is copied into an
empty folder and executed there by nbclient, offline, with the repository off the kernel's path
(download_runner.py): its library cell and its gradio_client cell (which calls the lane's app) must both print
the page's result in the same words, and the ids, scores and texts below are checked against the page's JSON
itself. The other families: test_code_view_download_{pipelines,inside,training}_api.py."""

from __future__ import annotations

import ast

import pytest

from tests.e2e import download_runner as runner

QUERY, PROMPT, TEXT = "make a model smaller", "The book teaches", "Great book, fast delivery.\nThe parcel arrived broken."


def test_the_search_notebook_builds_the_same_index_and_finds_the_same_passages(notebook_writer, app_url, tmp_path,
                                                                               notebook_kernel):
    build = {"choice": "glossary", "index_type": "flat", "embedder": "minilm"}
    client = runner.Client(app_url, verbose=False)
    client.predict(**build, api_name="/build_index")  # the page's index, in this session
    result, path = runner.run(app_url, notebook_writer, "search", {"query": QUERY, "k": 4}, client=client)
    outs = runner.execute(path, tmp_path / "nb", notebook_kernel)
    _, library, _ = runner.gives_back("search", result, outs)
    rows = [line.split(" ", 2) for line in library]
    assert [int(r[1]) for r in rows] == [h["id"] for h in result["results"]], library
    assert [float(r[0]) for r in rows] == pytest.approx([h["score"] for h in result["results"]], abs=2e-4), library


def test_the_decode_notebook_generates_the_same_text(notebook_writer, app_url, tmp_path, notebook_kernel):
    settings = {"strategy": "beam", "num_beams": 3, "max_new_tokens": 8, "num_return_sequences": 2}
    result, path = runner.run(app_url, notebook_writer, "decode", {"prompt": PROMPT, "settings": settings},
                              inputs={"prompt": PROMPT})
    _, library, _ = runner.gives_back("decode", result, runner.execute(path, tmp_path / "nb", notebook_kernel))
    assert [ast.literal_eval(line) for line in library] == [o["text"] for o in result["outputs"]]


def test_the_tokenize_and_classify_notebooks_give_the_same_tokens_and_scores(notebook_writer, app_url, tmp_path,
                                                                             notebook_kernel):
    tokens, path = runner.run(app_url, notebook_writer, "tokenize", {"text": "Tokenizing naïve text!", "special": True})
    _, library, _ = runner.gives_back("tokenize", tokens, runner.execute(path, tmp_path / "tok", notebook_kernel))
    roles = [role for role, r in tokens["results"].items() if "error" not in r]
    assert [line.split(" ", 1)[0] for line in library] == roles
    for role, line in zip(roles, library):
        assert f"] {tokens['results'][role]['ids']} [" in line, line
    result, path = runner.run(app_url, notebook_writer, "classify",
                              {"text": TEXT, "batch": True, "label_descriptions": "", "model_box": ""})
    _, library, _ = runner.gives_back("classify", result, runner.execute(path, tmp_path / "cls", notebook_kernel))
    assert len(library) == len(result["results"]), library
    for row, r in zip(library, result["results"]):
        pairs = ast.literal_eval(row[:row.rindex("]") + 1])
        assert [p[0] for p in pairs] == r["labels"], row
        assert [p[1] for p in pairs] == pytest.approx(r["scores"], abs=1e-4), row
        assert row.endswith(r["sequence"][:40])


def test_the_notebook_seconds():
    print("notebook seconds:", runner.TIMES)
