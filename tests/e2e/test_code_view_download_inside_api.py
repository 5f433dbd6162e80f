"""The notebooks of the tabs that look inside a model (Attention, Anatomy, Interventions, Why, Efficiency,
Multilingual) and of Search's index build run as downloaded and give the page's result back: a real run on the
lane's app, the notebook the page's writer offers for it executed from an empty folder, offline, without the
repository on its path (download_runner.py); its library cell and its gradio_client cell must both print the
page's result in the same words (backend/snippets/printed.py on the page's JSON). Short texts, few tokens."""

from __future__ import annotations

import pytest

from tests.e2e import download_runner as runner

RUNS = {
    "attention": {"text": "time flies like an arrow", "text_b": "", "role": "encoder", "layer": -1},
    "anatomy": {"text": "The cat sat", "text_b": "", "role": "decoder", "layer": 1, "head": 0, "token_index": -1,
                "override": ""},
    "intervene": {"model": "decoder", "text": "The capital of France is", "spec": "L3H*=0, L5.mlp=0",
                  "new_tokens": 3, "top_k": 5},
    "attribute": {"text": "Great food, rude staff.", "task": "sentiment", "labels": "", "label": "", "target": "",
                  "contrast": "", "word": "", "methods": ["occlusion", "integrated_gradients"], "steps": 8,
                  "random_orders": 1, "question": "", "model_box": ""},
    "efficiency": {"prompts": 1, "texts": 1, "new_tokens": 8, "encoder": False},
    "multilingual_ner": {"text": "Angela Merkel traf Emmanuel Macron in Paris.", "run": "de"},
    # a pasted text (the glossary's build and search: test_code_view_download_api.py), in an HNSW index
    "build_index": {"choice": "paste", "file": None, "paste": "Der Hund schläft im Garten.\nThe cat sits on the mat.\n"
                    "Transformers use self-attention.\nBeam search keeps several candidates.", "text_field": None,
                    "title_field": "",
                    "keep_good": False, "max_words": 120, "overlap": 30, "index_type": "hnsw", "m": 16, "efc": 40,
                    "efs": 16, "nlist": 100, "nprobe": 8, "pq_m": 16, "pq_bits": 8, "embedder": "minilm"},
}


@pytest.mark.parametrize("endpoint", list(RUNS))
def test_the_notebook_gives_the_page_result_back(endpoint, notebook_writer, app_url, tmp_path, notebook_kernel):
    runner.check(app_url, notebook_writer, notebook_kernel, tmp_path / "nb", endpoint, RUNS[endpoint])


def test_the_notebook_seconds():
    print("notebook seconds:", runner.TIMES)
