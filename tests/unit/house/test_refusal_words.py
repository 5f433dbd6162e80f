"""Refusals speak the caller's words: no Python type names ("got NoneType"), a lone surrogate inside a
decode-by-hand path named as the path's step, and never echoed raw in a message that reaches the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from backend.decoding.by_hand import parse_path
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text, kind
from tests.helpers.tiny_models import smollm2_tokenizer

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("value, words", [(None, "nothing"), ({}, "an object"), ([], "a list"), (3, "a number"),
                                          (True, "true/false"), (object(), "a value of another kind")])
def test_a_wrong_value_is_named_in_plain_words(value, words):
    assert kind(value) == words


def test_no_refusal_in_the_code_names_a_python_type():
    hits = [f"{p.relative_to(ROOT)}:{i}" for folder in ("backend", "components") for p in (ROOT / folder).rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"got \{type\([^)]*\)\.__name__\}|is a \{type\(", line)]
    assert hits == []


def test_a_list_for_a_text_is_named_a_list():
    with pytest.raises(InputError, match="must be text, got a list"):
        check_text(["a"])


@pytest.mark.parametrize("path", [[" the", "\udfff"], ["\udfff"], '["\\udfff"]'])
def test_a_lone_surrogate_in_a_path_names_the_step(path):
    with pytest.raises(InputError, match=r"path step \d+ holds a lone surrogate"):
        parse_path(smollm2_tokenizer(), path, smollm2_tokenizer().vocab_size)


def test_a_message_reaches_the_page_with_a_lone_surrogate_escaped():
    from backend.runtime.errors import InputError as E
    from components.shell.errors import readable_error

    err = readable_error(E("The word 'a\udfffb' is not in the text."), "attribute")
    assert "\\udfff" in err.message and not re.search("[\ud800-\udfff]", err.message)
