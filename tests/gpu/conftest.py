"""The GPU tier: the device paths run on a real CUDA device, with random-weight models built from
configs (a SmolLM2-135M-shaped llama at fewer layers, a MiniLM-shaped BERT) and the packaged
models' real tokenizers.

Without CUDA every test here is skipped (`pytest -q tests/gpu` reports skips, not errors); with
TLAB_REQUIRE_GPU=1 (scripts/gpu_check.sh sets it) a missing device fails instead, so a run on a
lent machine cannot pass by skipping. CI's lanes leave this folder out (scripts/test_lanes.py).

Tokenizers: from TLAB_GPU_TOKENIZERS (a folder with `minilm/` and `smollm2/`, which
scripts/gpu_check.sh prepares from the packaged models and carries), else from the packaged
models themselves (tests/helpers/tiny_models.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from tests.helpers.gpu_models import DEVICE, bert, llama, minilm_tokenizer, smollm2_tokenizer

CUDA = torch.cuda.is_available() or DEVICE != "cuda"  # a dry run on the CPU runs too

HERE = Path(__file__).resolve().parent
REASON = "tests/gpu needs a CUDA device (none here); scripts/gpu_check.sh runs it on one"


def pytest_collection_modifyitems(config, items):
    mine = [item for item in items if Path(str(item.fspath)).resolve().parent == HERE]
    for item in mine:
        item.add_marker(pytest.mark.gpu)
    if CUDA:
        return
    if os.environ.get("TLAB_REQUIRE_GPU") == "1":
        raise pytest.UsageError("TLAB_REQUIRE_GPU=1 but torch sees no CUDA device: " + REASON)
    for item in mine:
        item.add_marker(pytest.mark.skip(reason=REASON))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: the GPU tier (tests/gpu), skipped without CUDA")


@pytest.fixture(scope="session")
def smol():
    return llama(), smollm2_tokenizer()


@pytest.fixture(scope="session")
def minilm():
    return bert(), minilm_tokenizer()
