"""Tiny models served through the hub for the Efficiency tab's unit tests (fixtures)."""

from __future__ import annotations


import pytest

from backend.engines.compression import quantize as Q
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_bert, tiny_llama


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("efficiency-api")
    enc_tok, dec_tok = minilm_tokenizer(), smollm2_tokenizer()
    return {
        "embedder": save_tiny(tiny_bert(vocab_size=len(enc_tok)), enc_tok, root / "tiny-bert"),
        "decoder": save_tiny(tiny_llama(vocab_size=len(dec_tok), max_position_embeddings=512, initializer_range=0.3),
                             dec_tok, root / "tiny-llama"),
    }


@pytest.fixture
def served(folders, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(folders["embedder"]))
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folders["decoder"]))
    Q.clear_cache()
    yield
    Q.clear_cache()
