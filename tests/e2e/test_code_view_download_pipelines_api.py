"""The Pipelines tab's notebooks run as downloaded and give the page's result back (the code view's "Download as
a notebook"): for each task but Classify (tests/e2e/test_code_view_download_api.py), a real run on the lane's
app, the notebook the page's writer offers for it executed from an empty folder, offline, without the
repository on its path (download_runner.py); its library cell and its gradio_client cell must both print the
page's result in the same words (backend/snippets/printed.py on the page's JSON). Short texts, few tokens."""

from __future__ import annotations

import pytest

from tests.e2e import download_runner as runner

LETTER = "Dear Amazon, I ordered a Megatron figure from Germany but got Optimus Prime. Please send Megatron."
RUNS = {
    "zero_shot": {"text": LETTER + "\nThe books are wonderful!", "labels": "complaint, praise, shipping",
                  "multi_label": False, "template": "This text is about {}.", "batch": True, "model_box": ""},
    "ner": {"text": "Bumblebee lives in Detroit with Angela Merkel.", "aggregation": "simple", "batch": False,
            "model_box": ""},
    "qa": {"context": LETTER, "question": "What did the customer get?", "top_n": 2, "model_box": ""},
    "summarize": {"text": LETTER, "max_new_tokens": 8, "min_new_tokens": 0, "num_beams": 0, "reference": "",
                  "model_box": ""},
    "translate": {"text": "Hello.", "source": "en", "target": "de", "max_new_tokens": 6, "num_beams": 0,
                  "reference": "", "model_box": ""},
    "fill_mask": {"text": "Paris is the [MASK] of France.", "top_k": 3, "model_box": ""},
    "generate_text": {"prompt": "Dear Bumblebee,", "strategy": "sample", "max_new_tokens": 5, "temperature": 0.8,
                      "top_k": 50, "top_p": 0.9, "num_beams": 1, "seed": 7, "model_box": ""},
}


@pytest.mark.parametrize("endpoint", list(RUNS))
def test_the_task_notebook_gives_the_page_result_back(endpoint, notebook_writer, app_url, tmp_path, notebook_kernel):
    runner.check(app_url, notebook_writer, notebook_kernel, tmp_path / "nb", endpoint, RUNS[endpoint])


def test_the_notebook_seconds():
    print("notebook seconds:", runner.TIMES)
