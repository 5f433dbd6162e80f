"""JSON from a visitor: deep nesting is a readable refusal, never "maximum recursion depth"."""

from __future__ import annotations

import json

import pytest

from backend.engines.classify import datasets
from backend.engines.generation.settings import parse_settings, parse_strategies
from backend.runtime import json_input
from backend.runtime.errors import InputError
from backend.search import corpora

DEEP = "[" * 100_000


def test_depth_counts_lists_and_objects_without_recursion():
    assert json_input.depth(1) == 0 and json_input.depth([1, {"a": [2]}]) == 3
    value = []
    for _ in range(5000):
        value = [value]
    assert json_input.depth(value) == 5001  # no RecursionError on a deep value


@pytest.mark.parametrize("text", [DEEP, "[" * 40 + "]" * 40])
def test_too_deep_is_refused_by_name(text):
    with pytest.raises(InputError, match="settings is nested"):
        json_input.loads(text, "settings")


def test_malformed_json_still_reaches_the_callers_own_message():
    with pytest.raises(json.JSONDecodeError):
        json_input.loads("{oops", "settings")


def test_every_place_that_reads_a_visitors_json_refuses_deep_nesting(tmp_path):
    with pytest.raises(InputError, match="settings is nested"):
        parse_settings(DEEP)
    with pytest.raises(InputError, match="strategies is nested"):
        parse_strategies(DEEP)
    upload = tmp_path / "deep.jsonl"
    upload.write_text('{"text": "fine", "label": "a"}\n' + DEEP + "\n")
    with pytest.raises(InputError, match="Line 2 of the JSONL file is nested"):
        datasets.read_upload(str(upload), "", "")
    assert corpora.jsonl_fields('{"text": "a"}\n' + DEEP) == ["text"]  # a bad line adds no field
