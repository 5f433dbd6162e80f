"""The memory budget's refusals, over the shapes a fuzzer finds (backend/runtime/memory_budget.py): a run
it lets through fits the share; a run it refuses does not, and every way it names to fit does fit."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.runtime.errors import InputError
from backend.runtime.memory_budget import MB, Shape, check_generation, generation_bytes

SMOLLM2 = Shape(layers=30, heads=9, kv_heads=3, head_dim=64, vocab=49152)
BART = Shape(layers=6, heads=16, kv_heads=16, head_dim=64, vocab=50264, encoder_heads=16)


@pytest.fixture(autouse=True)
def share(monkeypatch):
    monkeypatch.setenv("TLAB_REQUEST_MEMORY_MB", "2048")


@settings(max_examples=300, deadline=None)
@given(shape=st.sampled_from([SMOLLM2, BART]), prompt=st.integers(1, 8192), new=st.integers(1, 512),
       width=st.integers(1, 16), beam=st.booleans(), keep=st.booleans(), source=st.sampled_from([0, 512, 1024]))
def test_a_refusal_is_true_and_its_ways_fit(shape, prompt, new, width, beam, keep, source):
    source = source if shape is BART else 0
    limit = 2048 * MB
    try:
        parts = check_generation(shape, prompt, new, width, beam, keep, source)
    except InputError as exc:
        msg = str(exc)
        assert generation_bytes(shape, prompt, new, width, beam, keep, source)["total"] > limit
        assert "TLAB_REQUEST_MEMORY_MB" in msg and "\n" not in msg
        if m := re.search(r"at most (\d+) (?:beams|sequences)", msg):
            assert generation_bytes(shape, prompt, new, int(m.group(1)), beam, keep, source)["total"] <= limit
        if m := re.search(r"a text of at most ([\d,]+) tokens", msg):
            assert generation_bytes(shape, int(m.group(1).replace(",", "")), new, width, beam, keep, source)["total"] <= limit
        if m := re.search(r"at most ([\d,]+) new tokens", msg):
            assert generation_bytes(shape, prompt, int(m.group(1).replace(",", "")), width, beam, keep, source)["total"] <= limit
        return
    assert parts["total"] <= limit
