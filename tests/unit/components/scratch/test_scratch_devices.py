"""The From scratch models get their inputs on their own device.

They train on the CPU by design (see backend/engines/scratch/tiny_gpt.py), but a caller may hold one on
a GPU (a test, a Space that moved it): `sample`, the losses and the encoder-decoder's `greedy`
must then build their token tensors there. A model on the "meta" device stands in for a GPU:
a hook records the device of every tensor a forward receives, then stops the run (meta tensors
have no values to decode).
"""

from __future__ import annotations

import pytest
import torch
from transformers.modeling_outputs import BaseModelOutput

from backend.engines.scratch import seq2seq, seq2seq_data, tiny_gpt


class Seen(Exception):
    """Raised by the hook once it has seen what it needs."""


def _watch(module, devices: set, stop: bool):
    def hook(_module, args, kwargs):
        devices.update(t.device.type for t in (*args, *kwargs.values()) if torch.is_tensor(t))
        if stop:
            raise Seen
    return module.register_forward_pre_hook(hook, with_kwargs=True)


@pytest.fixture(scope="module")
def gpt():
    return tiny_gpt.build_model(vocab_size=256, layers=1, heads=2, width=16, context=16, seed=0)


@pytest.fixture(scope="module")
def bart():
    tok = seq2seq.build_tokenizer(seq2seq_data.load("train"))
    return seq2seq.build_model(tok.get_vocab_size(), 1, 2, 16, 32, 0, tok), tok


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_sample_feeds_the_model_on_its_device(gpt, temperature):
    model, devices = tiny_gpt.build_model(256, 1, 2, 16, 16, 0).to("meta"), set()
    _watch(model, devices, stop=True)
    with pytest.raises(Seen):
        tiny_gpt.sample(model, [1, 2, 3], 4, temperature, seed=0)
    assert devices == {"meta"}


def test_sample_on_the_cpu_is_unchanged(gpt):
    greedy = tiny_gpt.sample(gpt, [72, 105], 6, 0.0, seed=0)
    assert greedy == tiny_gpt.sample(gpt, [72, 105], 6, 0.0, seed=1) and len(greedy) == 6
    drawn = tiny_gpt.sample(gpt, [72, 105], 6, 0.8, seed=3)
    assert drawn == tiny_gpt.sample(gpt, [72, 105], 6, 0.8, seed=3)  # the seeded CPU generator: the same draw


def test_the_gpt_loss_feeds_the_model_on_its_device():
    model, devices = tiny_gpt.build_model(256, 1, 2, 16, 16, 0).to("meta"), set()
    _watch(model, devices, stop=True)
    x = torch.randint(0, 256, (2, 16))
    with pytest.raises(Seen):
        tiny_gpt.val_loss(model, (x, x))
    assert devices == {"meta"}


def test_greedy_and_the_loss_of_the_encoder_decoder_feed_it_on_its_device(bart):
    cpu_model, tok = bart
    model = seq2seq.build_model(tok.get_vocab_size(), 1, 2, 16, 32, 0, tok).to("meta")
    encoder_devices, decoder_devices, loss_devices = set(), set(), set()

    def encoder(input_ids, attention_mask):  # meta tensors cannot run BART's mask code: record, answer in shape
        encoder_devices.update({input_ids.device.type, attention_mask.device.type})
        return BaseModelOutput(last_hidden_state=torch.zeros(*input_ids.shape, 16, device=input_ids.device))

    model.get_encoder = lambda: encoder
    handle = _watch(model, decoder_devices, stop=True)
    x, m = seq2seq.encode_batch(tok, ["the first of may , two thousand"], seq2seq.MAX_SOURCE)
    with pytest.raises(Seen):
        seq2seq.greedy(model, tok, x, m)
    assert encoder_devices == {"meta"} and decoder_devices == {"meta"}
    handle.remove()
    _watch(model, loss_devices, stop=True)
    with pytest.raises(Seen):
        seq2seq.val_loss(model, seq2seq.make_batch(tok, seq2seq_data.load("validation")[:2]))
    assert loss_devices == {"meta"}
    assert len(seq2seq.greedy(cpu_model, tok, x, m)) == 1  # and on the CPU it still runs


def test_inspect_returns_numpy_arrays_from_the_cpu_model(bart):
    model, tok = bart
    r = seq2seq.inspect(model, tok, "the first of may , two thousand", 0, 1)
    assert r["cross_attentions"].shape[:2] == (1, 2) and r["recomputed"].ndim == 2
    assert r["max_abs_diff"] < 1e-5


def test_the_plan_says_where_the_models_train_and_it_is_true(gpt, bart):
    from backend import scratch
    from components.scratch import gpt as gpt_tab
    from components.scratch import seq2seq as s2s_tab

    for plan, line in ((scratch.plan_gpt(steps=50), gpt_tab.plan_line), (scratch.plan_seq2seq(steps=50), s2s_tab.plan_line)):
        assert plan["device"] == tiny_gpt.DEVICE == "cpu"
        assert "trains on the CPU" in line(plan) and "also on a machine with a GPU" in line(plan)
    assert {next(m.parameters()).device.type for m in (gpt, bart[0])} == {tiny_gpt.DEVICE}  # as built for training
