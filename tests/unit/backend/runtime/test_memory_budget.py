"""A generation's memory, estimated before any forward (backend/runtime/memory_budget.py), refuses the
run that once took the server down, with what to lower; the guard in the request's budget stops a run
whose measured growth passes its share."""

from __future__ import annotations

import json

import pytest
import torch

from backend.engines.tasks import instruct
from backend.engines.generation.prefill import shape_of
from backend.runtime import budget, memory, memory_budget
from backend.runtime.errors import InputError
from backend.runtime.memory_budget import MB, Shape, check_generation, generation_bytes
from tests.helpers.tiny_models import smollm2_dir, smollm2_tokenizer

LONG_TEXT = ("The port authority said on Monday that the new harbour wall, begun in 1851 and finished two "
             "years later, protects about 3,000 people who live on the low ground behind it. ") * 110  # ~20,000 chars


@pytest.fixture(autouse=True)
def share_2048(monkeypatch):
    """The operator's share, as on this 24 GB box by default (the default's own test unsets it)."""
    monkeypatch.setenv("TLAB_REQUEST_MEMORY_MB", "2048")


@pytest.fixture(scope="module")
def smollm2_shape_model():
    """SmolLM2-135M's real shape (30 layers, 9 heads, 3 key/value heads), on the meta device: no weights."""
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.from_pretrained(str(smollm2_dir()))
    cfg._attn_implementation = "eager"
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    model.forward = lambda *a, **k: pytest.fail("a forward ran before the memory check")
    return model


def test_the_shape_is_read_off_the_config(smollm2_shape_model):
    s = shape_of(smollm2_shape_model)
    assert (s.layers, s.heads, s.kv_heads, s.head_dim, s.vocab, s.dtype_bytes) == (30, 9, 3, 64, 49152, 4)


def test_the_cache_is_counted_as_the_model_holds_it():
    """Keys and values of every layer, kv heads x head_dim floats per token and sequence (a DynamicCache
    measured here holds exactly this)."""
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                      num_attention_heads=4, num_key_value_heads=2)
    model = LlamaForCausalLM(cfg).eval()
    cache = DynamicCache(config=cfg)
    with torch.inference_mode():
        model(input_ids=torch.zeros(2, 50, dtype=torch.long), past_key_values=cache, use_cache=True)
    held = sum(layer.keys.numel() * 4 + layer.values.numel() * 4 for layer in cache.layers)
    assert generation_bytes(shape_of(model), 50, 0, width=2)["cache"] == held


def test_the_summary_that_took_the_server_down_is_refused_with_what_to_lower(smollm2_shape_model):
    tok = smollm2_tokenizer()
    messages = instruct.summary_messages(LONG_TEXT)
    with pytest.raises(InputError) as err:
        instruct.chat_generate(smollm2_shape_model, tok, messages, max_new_tokens=512, num_beams=8)
    msg = str(err.value)
    assert "over this server's 2,048 MB per request" in msg and "TLAB_REQUEST_MEMORY_MB" in msg
    fits = int(msg.split("at most ")[1].split(" beams")[0])
    assert 1 <= fits < 8
    # what it names as fitting does fit, and one more beam does not
    n = len(instruct.chat_prompt(tok, messages, 512, 8192)[1])
    assert n > 4000, n
    shape = shape_of(smollm2_shape_model)
    assert generation_bytes(shape, n, 512, fits, True, True)["total"] <= 2048 * MB
    assert generation_bytes(shape, n, 512, fits + 1, True, True)["total"] > 2048 * MB


def test_a_greedy_summary_of_the_same_text_fits(smollm2_shape_model):
    n = 4_600
    parts = check_generation(shape_of(smollm2_shape_model), n, 80, 1, False, keep_logits=True)
    assert parts["total"] < 1024 * MB and parts["share_mb"] == 2048


def test_the_share_is_the_operators(monkeypatch):
    monkeypatch.setenv("TLAB_REQUEST_MEMORY_MB", "100")
    assert memory_budget.share_mb() == 100.0
    shape = Shape(layers=30, heads=9, kv_heads=3, head_dim=64, vocab=49152)
    with pytest.raises(InputError, match="over this server's 100 MB"):
        check_generation(shape, 2000, 100, 4, True)


def test_an_encoder_decoder_counts_its_source_once_and_its_cross_cache_per_beam():
    shape = Shape(layers=6, heads=16, kv_heads=16, head_dim=64, vocab=50264, encoder_heads=16)
    one = generation_bytes(shape, 1, 100, 1, False, source=1024)
    four = generation_bytes(shape, 1, 100, 4, True, source=1024)
    assert one["encoder"] == four["encoder"] == 16 * 1024 * 1024 * 4 * 3
    assert four["cross_cache"] == 4 * one["cross_cache"]


def test_the_guard_stops_a_run_that_grew_past_its_shares(monkeypatch):
    readings = iter([1000.0, 1000.0 + 2 * 2048 + 1])
    monkeypatch.setattr(memory, "rss_mb", lambda: next(readings))
    b = budget.Budget(seconds=60)
    assert b.expired() and b.finish_reason == "memory budget"
    with pytest.raises(budget.MemoryExceeded, match="grew by more than 4,096 MB"):
        b.check("2 of 8 chunks")


def test_the_guard_lets_a_run_within_its_shares_go_on(monkeypatch):
    readings = iter([1000.0, 1000.0 + 2 * 2048 - 1])
    monkeypatch.setattr(memory, "rss_mb", lambda: next(readings))
    b = budget.Budget(seconds=60)
    assert not b.expired() and b.finish_reason is None


@pytest.mark.parametrize("machine, share", [(24 * 1024, 2048), (16 * 1024, 2048), (8 * 1024, 1024), (4 * 1024, 256)])
def test_the_default_share_leaves_the_machine_a_margin(monkeypatch, machine, share):
    monkeypatch.delenv("TLAB_REQUEST_MEMORY_MB", raising=False)
    monkeypatch.setattr(memory_budget, "machine_mb", lambda: float(machine))
    assert memory_budget.share_mb() == share
    # the models plus two long slots at their guard never pass the machine's memory (small machines aside)
    assert share == 256 or memory_budget.MODELS_MB + 2 * memory_budget.GUARD_FACTOR * share <= machine
