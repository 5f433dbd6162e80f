"""One step of each training loop that runs on the served model's device, and the From scratch models
held on a CUDA device (they train on the CPU by design: here a caller moved them)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch

from backend.engines.classify import finetune
from backend.engines.ner import data as ner_data, token_classification
from backend.engines.scratch import seq2seq, seq2seq_data, tiny_gpt
from tests.helpers.gpu_models import DEVICE


def _lm(model, tok):
    return SimpleNamespace(model=model, tokenizer=tok, checkpoint="minilm-shaped", device=DEVICE, role="encoder")


def test_one_step_of_the_classifier_fine_tune_and_its_forward(minilm):
    model, tok = minilm
    lm = _lm(model, tok)
    batches = [(["a wonderful film", "a dreadful film", "I loved it", "I hated it"], [1, 0, 1, 0])]
    served = {k: v.clone() for k, v in model.state_dict().items()}
    try:
        out = finetune.train_chunk(lm, None, batches, 2, 1e-4, 0, 1, 0, 60.0)
        assert len(out["losses"]) == 1 and math.isfinite(out["losses"][0])
        assert all(v.device.type == "cpu" for v in out["state"]["model"].values())  # state travels on the CPU
        probs, pooled = finetune.forward_chunk(lm, out["state"]["model"], ["a fine film", "a poor one"], 2)
        assert probs.shape == (2, 2) and np.allclose(probs.sum(1), 1.0) and pooled.shape[0] == 2
    finally:
        finetune.release_scratch()
    assert all(torch.equal(v, served[k]) for k, v in model.state_dict().items())  # the served model is untouched


def test_one_step_of_the_token_classifier(minilm):
    model, tok = minilm
    labels = ["O", "B-PER", "I-PER", "B-LOC"]
    train = [ner_data.Sentence(["Ada", "Lovelace", "lived", "in", "London"], ["B-PER", "I-PER", "O", "O", "B-LOC"]),
             ner_data.Sentence(["Alan", "visited", "Paris"], ["B-PER", "O", "B-LOC"])]
    clf = token_classification.new_model(model, len(labels)).to(DEVICE)
    recipe = token_classification.Recipe(epochs=1, batch_size=2, max_length=32)
    outcome = token_classification.train(clf, tok, train, train, labels, recipe)
    assert outcome.losses and all(math.isfinite(v) for v in outcome.losses)
    predicted = token_classification.predict(clf, tok, [["Grace", "lived", "in", "Rome"]], labels)
    assert len(predicted) == 1


def test_the_tiny_gpt_trains_a_step_and_samples_on_the_device():
    model = tiny_gpt.build_model(vocab_size=256, layers=2, heads=2, width=32, context=32, seed=0).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(0, 256, (4, 32))
    (model, opt), losses = tiny_gpt.train_chunk((model, opt), [(x, x)], [1e-3])
    assert len(losses) == 1 and math.isfinite(losses[0])
    model.eval()
    for temperature in (0.0, 0.8):
        new = tiny_gpt.sample(model, [72, 105], 8, temperature, seed=0)
        assert len(new) == 8 and all(0 <= t < 256 for t in new)
    assert math.isfinite(tiny_gpt.val_loss(model, (x, x)))


def test_the_tiny_encoder_decoder_trains_a_step_translates_and_is_inspected_on_the_device():
    pairs = seq2seq_data.load("train")
    tok = seq2seq.build_tokenizer(pairs)
    model = seq2seq.build_model(tok.get_vocab_size(), 1, 2, 32, 64, 0, tok).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    (model, opt), losses = seq2seq.train_chunk((model, opt), [seq2seq.make_batch(tok, pairs[:8])], [1e-3])
    assert len(losses) == 1 and math.isfinite(losses[0])
    x, m = seq2seq.encode_batch(tok, [pairs[0][0]], seq2seq.MAX_SOURCE)
    assert len(seq2seq.greedy(model.eval(), tok, x, m)) == 1
    ev = seq2seq.evaluate(model, tok, list(seq2seq_data.load("validation")[:8]))
    assert ev["items"] == 8
    r = seq2seq.inspect(model, tok, pairs[0][0], 0, 1)
    assert isinstance(r["cross_attentions"], np.ndarray) and r["max_abs_diff"] < 1e-4
