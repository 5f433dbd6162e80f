"""The one text check and the number readers: every tab's input goes through these."""

from __future__ import annotations

import math

import pytest

from backend.runtime import config
from backend.runtime.errors import InputError
from backend.runtime.validation import as_bool, as_float, as_int, check_text


def test_rules_strip_or_keep_whitespace_by_use():
    assert check_text("  a letter \n") == "a letter"
    assert check_text("Once upon a ", "prompt") == "Once upon a "  # the trailing space changes the next token
    assert check_text("", "tokenize") == "" and check_text(None, "attention") == ""


@pytest.mark.parametrize("use", sorted(u for u, r in config.TEXT_RULES.items() if not r.allow_empty))
def test_empty_is_refused_with_the_use_s_own_words(use):
    rule = config.TEXT_RULES[use]
    with pytest.raises(InputError, match=f"The {rule.what} is empty: {rule.hint[:20]}"):
        check_text(" \n\t", use)


@pytest.mark.parametrize("use", sorted(config.TEXT_RULES))
def test_over_the_limit_names_the_limit(use):
    limit = config.text_rule(use).max_chars
    assert check_text("x" * limit, use)
    with pytest.raises(InputError, match=f"at most {limit:,}"):
        check_text("x" * (limit + 1), use)


def test_tokenizer_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TLAB_MAX_TOKENIZE_CHARS", "10")
    with pytest.raises(InputError, match="at most 10"):
        check_text("x" * 11, "tokenize")


def test_wrong_types_and_lone_surrogates():
    with pytest.raises(InputError, match="must be text, got an object"):
        check_text({"a": 1})
    assert check_text("a\udc80b\ud800") == "a\ufffdb\ufffd"
    check_text("a\udc80b").encode("utf-8")  # what a tokenizer needs


def test_what_renames_the_field():
    with pytest.raises(InputError, match="The second sentence must be text"):
        check_text(3, "attention", what="second sentence")


@pytest.mark.parametrize("value,expected", [(3, 3), (3.0, 3), ("3", 3), (" 4 ", 4)])
def test_as_int_accepts_what_widgets_and_json_send(value, expected):
    assert as_int("top_n", value) == expected


@pytest.mark.parametrize("value", [math.nan, math.inf, 2.5, True, "x", "", None, [1]])
def test_as_int_refuses_with_the_parameter_name(value):
    with pytest.raises(InputError, match="^top_n must be"):
        as_int("top_n", value)


def test_bounds_are_worded_for_one_or_both_sides():
    with pytest.raises(InputError, match="top_n must be between 1 and 20, got 21"):
        as_int("top_n", 21, lo=1, hi=20)
    with pytest.raises(InputError, match="k must be at least 1, got 0"):
        as_int("k", 0, lo=1)
    with pytest.raises(InputError, match="temperature must be at most 5, got 6"):
        as_float("temperature", 6, hi=5)
    with pytest.raises(InputError, match="must be a finite number"):
        as_float("temperature", "nan")
    assert as_bool("multi_label", "yes") is True and as_bool("multi_label", 0) is False
    with pytest.raises(InputError, match="must be true or false"):
        as_bool("multi_label", "maybe")
