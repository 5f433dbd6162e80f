"""The decode's logits processors live on the model's device.

transformers' MinNewTokensLengthLogitsProcessor keeps the EOS ids in a tensor made on the CPU
unless told otherwise; on a GPU `torch.isin(input_ids, eos)` then fails with "Expected all
tensors to be on the same device" and every decode with a minimum length crashes. A model on
the "meta" device stands in for a GPU here: a tensor made without `device=` is on the CPU, not
on meta, whatever the machine.
"""

from __future__ import annotations

import pytest
import torch

from backend.engines.generation import generate
from backend.engines.generation.settings import DecodeSettings
from backend.engines.generation.setup import build_processors
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama


def _tensors(processors) -> list[tuple[str, str, torch.Tensor]]:
    return [(type(p).__name__, name, value) for p in processors for name, value in vars(p).items()
            if torch.is_tensor(value)]


def _settings(strategy: str) -> DecodeSettings:
    extra = dict(num_beams=2) if strategy == "beam" else dict(temperature=0.7, top_k=5, top_p=0.9, seed=0) \
        if strategy == "sample" else {}
    return DecodeSettings(strategy=strategy, max_new_tokens=6, min_new_tokens=3, repetition_penalty=1.2,
                          no_repeat_ngram_size=2, **extra).validate()


@pytest.mark.parametrize("strategy", ["greedy", "beam", "sample"])
def test_the_wired_chain_holds_its_tensors_on_the_models_device(strategy):
    tok = smollm2_tokenizer()
    model = tiny_llama(vocab_size=len(tok)).to("meta")
    assert model.device.type == "meta"
    wired = generate._wire(model, tok, "The cat sat on the", _settings(strategy), None, None)
    held = _tensors(wired.processors)
    assert any(cls == "MinNewTokensLengthLogitsProcessor" for cls, _, _ in held)  # the one that broke on CUDA
    assert {(cls, name): t.device.type for cls, name, t in held} == {(cls, name): "meta" for cls, name, _ in held}


def test_build_processors_puts_the_eos_ids_where_it_is_told():
    settings = _settings("greedy")
    on_meta, _ = build_processors(settings, 5, {2, 7}, device="meta")
    on_cpu, _ = build_processors(settings, 5, {2, 7})
    (_, _, eos_meta), = _tensors(on_meta)
    (_, _, eos_cpu), = _tensors(on_cpu)
    assert eos_meta.device.type == "meta" and eos_cpu.device.type == "cpu"
    assert eos_cpu.tolist() == [2, 7]


def test_a_minimum_length_still_holds_eos_back_on_the_cpu():
    """The same chain on the CPU: EOS is masked until min_new_tokens are written, then allowed."""
    settings = _settings("greedy")
    procs, _ = build_processors(settings, prompt_len=4, eos={2}, device=torch.device("cpu"))
    min_len = next(p for p in procs if type(p).__name__ == "MinNewTokensLengthLogitsProcessor")
    scores = torch.zeros(1, 10)
    early = min_len(torch.zeros(1, 5, dtype=torch.long), scores.clone())
    late = min_len(torch.zeros(1, 7, dtype=torch.long), scores.clone())
    assert early[0, 2] == -float("inf") and late[0, 2] == 0
