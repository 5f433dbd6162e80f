"""Tiny models (a BERT encoder, a Llama decoder, a DistilBERT) saved as folders and served through the hub: the
fixtures the Anatomy and Interventions unit tests share."""

from __future__ import annotations


import pytest

from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, smollm2_tokenizer, tiny_bert, tiny_llama


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("interventions-api")
    enc_tok, dec_tok = minilm_tokenizer(), smollm2_tokenizer()
    from transformers import DistilBertConfig, DistilBertModel

    distil = DistilBertModel(DistilBertConfig(vocab_size=len(enc_tok), dim=32, n_layers=1, n_heads=2, hidden_dim=37))
    return {
        "encoder": save_tiny(tiny_bert(vocab_size=len(enc_tok)), enc_tok, root / "tiny-bert"),
        "decoder": save_tiny(tiny_llama(vocab_size=len(dec_tok), initializer_range=0.3), dec_tok, root / "tiny-llama"),
        "distilbert": save_tiny(distil, enc_tok, root / "tiny-distilbert"),
    }


@pytest.fixture
def served(folders, monkeypatch):
    monkeypatch.setenv("TLAB_DEVICE", "cpu")
    monkeypatch.setenv("TLAB_MODEL_ENCODER", str(folders["encoder"]))
    monkeypatch.setenv("TLAB_MODEL_DECODER", str(folders["decoder"]))
    return folders
