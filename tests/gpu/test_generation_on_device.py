"""Generation on a CUDA device: every strategy, with and without a minimum length, the step taps and
the beam record; greedy against plain `generate` and against the CPU; decode by hand; int8."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from backend.decoding import by_hand
from backend.decoding import precision as served_precision
from backend.engines.generation import generate
from backend.runtime import precision
from tests.helpers.gpu_models import DEVICE, llama, smollm2_tokenizer

PROMPT = "The cat sat on the"
STRATEGIES = {
    "greedy": dict(strategy="greedy"),
    "beam4": dict(strategy="beam", num_beams=4),
    "top_k": dict(strategy="sample", top_k=50, seed=0),
    "top_p": dict(strategy="sample", top_p=0.9, seed=0),
    "temperature": dict(strategy="sample", temperature=0.7, seed=0),
    "penalties": dict(strategy="sample", temperature=0.9, top_k=20, repetition_penalty=1.3, no_repeat_ngram_size=2,
                      seed=0),
}


@pytest.mark.parametrize("min_new", [0, 5])
@pytest.mark.parametrize("name", STRATEGIES)
def test_every_strategy_runs_on_the_device(smol, name, min_new):
    model, tok = smol
    settings = dict(STRATEGIES[name], max_new_tokens=10, min_new_tokens=min_new)
    r = generate.decode(model, tok, PROMPT, settings)
    out = r.outputs[0]
    assert out["n_tokens"] >= min_new and out["n_tokens"] <= 10
    assert len(r.steps) == out["n_tokens"] or name == "beam4"
    if name == "beam4":
        assert r.beam_tree is not None and r.beam_tree["nodes"]
    assert r.to_dict()["outputs"]


def test_instrumented_greedy_equals_plain_generate(smol):
    model, tok = smol
    r = generate.decode(model, tok, PROMPT, dict(strategy="greedy", max_new_tokens=16))
    ids = torch.tensor([tok(PROMPT)["input_ids"]], device=DEVICE)
    with torch.inference_mode():
        plain = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=16, do_sample=False,
                               min_new_tokens=0, pad_token_id=tok.eos_token_id)
    assert r.outputs[0]["token_ids"] == plain[0, ids.shape[1]:].tolist()[:len(r.outputs[0]["token_ids"])]


def test_cpu_and_device_greedy_agree_in_float32():
    tok = smollm2_tokenizer()
    on_gpu = llama(layers=2, dtype=torch.float32)
    on_cpu = llama(layers=2, dtype=torch.float32).to("cpu")
    settings = dict(strategy="greedy", max_new_tokens=12)
    a = generate.decode(on_gpu, tok, PROMPT, settings).outputs[0]["token_ids"]
    b = generate.decode(on_cpu, tok, PROMPT, settings).outputs[0]["token_ids"]
    assert a == b


def test_decode_by_hand_on_the_device(smol):
    model, tok = smol
    r = by_hand.by_hand(model, tok, PROMPT, [" mat"], top_k=5, action="greedy", n=4)
    assert r["path_token_ids"][:1] == [tok(" mat", add_special_tokens=False)["input_ids"][0]]
    assert len(r["steps"]) == len(r["path_token_ids"]) and len(r["candidates"]) == 5
    sampled = by_hand.by_hand(model, tok, PROMPT, [], top_k=3, action="sample", n=3, seed=1)
    assert sampled["added"] >= 1


def test_score_sequence_and_step_distribution_on_the_device(smol):
    model, tok = smol
    ids = tok(PROMPT)["input_ids"]
    scored = generate.score_sequence(model, ids + ids[:3], len(ids), top_n=2)
    assert len(scored["logprob"]) == 3
    dist = generate.step_distribution(model, tok, ids)
    assert dist


def test_int8_runs_on_a_cpu_copy_and_the_fp32_column_on_a_float32_twin(smol):
    """fbgemm's int8 kernels are CPU-only: the int8 copy of a CUDA model lives on the CPU (or int8 is
    refused in words); the fp32 column re-scores on the float32 twin, on the device."""
    model, tok = smol
    lm = SimpleNamespace(model=model, tokenizer=tok, checkpoint="smollm2-shaped", kind="causal_lm", device=DEVICE,
                         dtype=precision.dtype_name(model), role="decoder-gpu-tier", describe=lambda: {"device": DEVICE})
    from backend.engines.compression import quantize

    try:
        served = served_precision.serve(lm, "int8")
    except quantize.QuantizationUnavailable as exc:
        assert "int8" in str(exc)
        return
    assert {p.device.type for p in served.model.parameters()} <= {"cpu"}
    assert served.describe["device"] == "cpu" and next(model.parameters()).device.type == DEVICE
    assert precision.is_float32(served.other) and next(served.other.parameters()).device.type == DEVICE
    data = generate.decode(served.model, tok, PROMPT, dict(strategy="greedy", max_new_tokens=6)).to_dict()
    data = served_precision.add_other(data, served)
    assert data["precision"]["other"] == "fp32" and all("prob_fp32" in s for s in data["steps"])
