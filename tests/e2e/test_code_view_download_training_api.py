"""The notebooks of the runs that train (Train's classifier and token classifier, From scratch's tokenizer, tiny
GPT and tiny encoder-decoder, chapter 8's compression) run as downloaded and give the page's numbers back: a
real run on the lane's app with a tiny budget (a few steps, a few dozen examples), the notebook the page's writer
offers for it executed from an empty folder, offline, without the repository on its path (download_runner.py);
its library cell and its gradio_client cell must both print the page's numbers in the same words. Every run is
seeded and the notebook repeats the page's steps on the same data, so it trains the same model: the same numbers
to the digits printed (download_runner.same_words allows one unit of the last printed digit, for a number the
page's JSON stored rounded before the client cell prints it; a real difference is many units)."""

from __future__ import annotations

import pytest

from tests.e2e import download_runner as runner

RUNS = {
    "train_tokenizer": {"algorithm": "BPE", "vocab_size": 300, "corpus": "tokenizers", "text": "", "upload": None,
                        "sentence": "Tokenizers learn merges."},
    "train_gpt": {"steps": 6, "layers": 1, "width": 32, "heads": 2, "learning_rate": 0.002, "seed": 3,
                  "tokens": "bytes", "corpus": "tokenizers", "text": "", "upload": None, "vocab_size": 1000},
    "train_seq2seq": {"steps": 6, "layers": 1, "width": 32, "heads": 2, "learning_rate": 0.003, "seed": 3},
    # max_seconds well above what 2 batches take: the budget must not cut the page's run short
    "train": {"dataset": "sentiment", "file": None, "text_column": "", "label_column": "",
              "methods": ["zero_shot", "probe", "finetune"], "epochs": 1, "max_examples": 16, "max_seconds": 60,
              "learning_rate": 0.0001, "batch_size": 8, "learning_curve": False, "curve_finetune": False, "seed": 0},
    "train_ner": {"source": "shipped", "file": None, "epochs": 2, "max_sentences": 48, "learning_rate": None,
                  "batch_size": 16, "word_shapes": True, "seed": 0},
    "compress": {"run": "default", "temperature": 2.0, "alpha": 0.5, "layers": 2, "sparsity": 0.5, "through": "all",
                 "epochs": 3},
}


@pytest.mark.parametrize("endpoint", list(RUNS))
def test_the_training_notebook_gives_the_page_numbers_back(endpoint, notebook_writer, app_url, tmp_path,
                                                           notebook_kernel):
    runner.check(app_url, notebook_writer, notebook_kernel, tmp_path / "nb", endpoint, RUNS[endpoint])


def test_the_notebook_seconds():
    print("notebook seconds:", runner.TIMES)
