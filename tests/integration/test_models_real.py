"""Both packaged models load offline from the `local` profile. (The GGUF conversion's cache is checked
where the suite's one cold conversion runs: tests/e2e/test_pipelines_timing_api.py.)"""

from __future__ import annotations

import pytest
import torch

from backend.runtime import config
from backend import hub


@pytest.fixture(autouse=True)
def local_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TLAB_PROFILE", "local")


def test_encoder_and_embedder_load_from_the_package():
    model_hub = hub.ModelHub()
    enc = model_hub.load("encoder")
    emb = model_hub.load("embedder")
    assert enc.checkpoint == emb.checkpoint == "sentence-transformers/all-MiniLM-L6-v2"
    assert enc.source == "package" and enc.model.config.num_hidden_layers == 6
    assert enc.model.config._attn_implementation == "eager"  # attention is shown
    ids = enc.tokenizer("attention is all you need", return_tensors="pt")
    with torch.inference_mode():
        out = enc.model(**ids, output_attentions=True)
    assert len(out.attentions) == 6 and out.attentions[0].shape[1] == 12
    sentiment = model_hub.load("sentiment")  # MiniLM fine-tuned once on the shipped set: its own copy
    assert sentiment.model.classifier.encoder is not emb.model
    assert sentiment.model.classifier.encoder.config.num_hidden_layers == 6
    assert sentiment.method == config.METHOD_FINETUNED and sentiment.describe()["test_accuracy"] >= 0.9
    assert model_hub.load("zero_shot").model is emb.model  # zero-shot keeps embedding similarity
    assert model_hub.load("zero_shot").method == config.METHOD_EMBEDDING


def test_decoder_generates_greedily_and_deterministically():
    dec = hub.get_hub().load("decoder")
    ids = dec.tokenizer("The capital of France is", return_tensors="pt")
    with torch.inference_mode():
        a = dec.model.generate(**ids, max_new_tokens=5, do_sample=False)
        b = dec.model.generate(**ids, max_new_tokens=5, do_sample=False)
    assert torch.equal(a, b) and a.shape[1] == ids["input_ids"].shape[1] + 5
    assert "Paris" in dec.tokenizer.decode(a[0])
