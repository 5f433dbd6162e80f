"""The goals a learner reaches with a tab (backend/challenges): the registry's shape, the answers it refuses
by name before any model loads, and the checks' model-free parts (the n-gram finder, the one-word
comparison, byte-pair encoding trained on the answer)."""

from __future__ import annotations

import json
import re

import pytest

from backend import challenges
from backend.challenges import answers, generation, words
from backend.runtime.errors import InputError

TAB_KEYS = {"pipelines", "train", "tokenizers", "multilingual", "anatomy", "attention", "why", "decoding",
            "efficiency", "interventions", "search", "scratch"}


def test_the_registry_covers_every_chapter_with_unique_ids():
    listed = challenges.challenges()
    assert len(listed) >= 22
    assert sorted({c["chapter"] for c in listed}) == list(range(1, 12))
    assert len({c["id"] for c in listed}) == len(listed)
    for c in listed:
        said = re.sub(r'"[^"]*"', '""', c["goal"])  # a quoted passage or reference aside
        assert said.endswith(".") and said.count(". ") == 0, c["id"]  # one sentence
        assert c["tab"].split("-")[0] in TAB_KEYS, c["id"]
        assert c["try_query"].get("tab", c["tab"]) == c["tab"], c["id"]
        assert c["hint"] and c["answer_format"]["required"], c["id"]
        json.dumps(c)  # what /challenges returns is JSON


@pytest.mark.parametrize("c", challenges.CHALLENGES, ids=lambda c: c.id)
def test_each_example_has_the_answers_shape(c):
    values = answers.parse(c.fields, json.dumps(c.example), c.example)
    assert set(values) == {f.name for f in c.fields}


def test_the_two_required_answer_formats():
    by_id = {c["id"]: c["answer_format"] for c in challenges.challenges()}
    assert by_id["flip-sentiment"]["required"] == ["a", "b"]
    assert by_id["stop-the-loop"]["required"] == ["prompt", "max_new_tokens"]
    assert by_id["stop-the-loop"]["properties"]["max_new_tokens"]["maximum"] == 64
    assert [c["id"] for c in challenges.challenges(2)][:2] == ["flip-sentiment", "tokenizers-disagree"]


FLIP, LOOP = "flip-sentiment", "stop-the-loop"


@pytest.mark.parametrize("cid,answer,said", [
    (FLIP, '{"a": "good", "b": ', "not valid JSON"),
    (FLIP, "", "empty"),
    (FLIP, "[1, 2]", "must be a JSON object, got a list"),
    (FLIP, '"just text"', "must be a JSON object, got text"),
    (FLIP, '{"a": "The film was good."}', "missing 'b'"),
    (FLIP, '{"a": "x", "b": "y", "c": "z"}', "unknown key(s) 'c'"),
    (FLIP, '{"a": 3, "b": "y"}', "'a' must be text, got a number"),
    (FLIP, '{"a": "   ", "b": "y"}', "'a' is empty"),
    (FLIP, json.dumps({"a": "w " * 150, "b": "y"}), "'a' is 299 characters long; at most 200"),
    (FLIP, '{"a": "\\ud800", "b": "y"}', "lone surrogate"),
    (FLIP, "[" * 100 + "]" * 100, "nested"),
    (FLIP, json.dumps({"a": "x" * 5000}), "characters long; at most 4,000"),
    (LOOP, '{"prompt": "Hi", "max_new_tokens": 65}', "'max_new_tokens' is 65; it must be from 1 to 64"),
    (LOOP, '{"prompt": "Hi", "max_new_tokens": "ten"}', "'max_new_tokens' must be a whole number from 1 to 64, got text"),
    (LOOP, '{"prompt": "Hi", "max_new_tokens": true}', "got true/false"),
    (LOOP, '{"prompt": "Hi", "max_new_tokens": 2.5}', "got a number"),
    (LOOP, '{"prompt": "Hi", "max_new_tokens": NaN}', "got a number"),
    (LOOP, '{"prompt": null, "max_new_tokens": 8}', "'prompt' must be text, got nothing"),
    ("few-labels", '{"joy": ["a"], "anger": ["b", "c"]}', "'joy' holds 1 texts; give from 2 to 4"),
    ("few-labels", '{"joy": "a", "anger": ["b", "c"]}', "'joy' must be a list of texts, got text"),
    ("few-labels", '{"joy": ["a", 2], "anger": ["b", "c"]}', "'joy' item 2 must be text"),
])
def test_a_malformed_answer_is_refused_by_name(cid, answer, said):
    with pytest.raises(InputError) as err:
        challenges.check_challenge(cid, answer)
    assert said in str(err.value)


@pytest.mark.parametrize("cid", [None, "", "flip", 7, "x" * 500])
def test_an_unknown_challenge_is_refused_with_the_list(cid):
    with pytest.raises(InputError, match="challenge_id must be one of mixed-review, "):
        challenges.check_challenge(cid, "{}")


def test_a_whole_number_written_as_a_float_is_taken():
    c = challenges.challenge(LOOP)
    assert answers.parse(c.fields, '{"prompt": "Hi", "max_new_tokens": 8.0}', c.example)["max_new_tokens"] == 8


def test_repeated_ngram_finds_the_first_repeat_a_new_token_completes():
    assert generation.repeated_ngram([1, 2, 3, 4, 1, 2, 3]) == (0, 4)
    assert generation.repeated_ngram([5, 1, 2, 3, 9, 2, 3, 9]) == (2, 5)
    assert generation.repeated_ngram([1, 2, 3, 1, 2, 4]) is None
    assert generation.repeated_ngram([1, 1]) is None
    # a prompt that repeats itself is not decoding's repeat; a new token completing the prompt's 3-gram is
    assert generation.repeated_ngram([1, 2, 3, 1, 2, 3, 7, 8], start=6) is None
    assert generation.repeated_ngram([1, 2, 3, 1, 2, 3, 7, 8], start=5) == (0, 3)
    assert generation.repeated_ngram([7, 1, 2, 3, 1, 2, 3], start=6) == (1, 4)


def test_word_edits_finds_the_one_word_changed_added_or_removed():
    assert words.word_edits("The film was good.", "The film was bad.") == [("good.", "bad.")]
    assert words.word_edits("The film was good.", "The film was not good.") == [("", "not")]
    assert words.word_edits("The film was not good.", "The film was good.") == [("not", "")]
    assert len(words.word_edits("a b c", "a x y")) == 2
    assert words.word_edits("same words", "same  words") == []


def _check(cid: str, answer: dict) -> dict:
    return challenges.check_challenge(cid, json.dumps(answer))


def test_first_merge_is_checked_on_a_bpe_trained_on_the_answer():
    good = _check("first-merge", {"corpus": "xylophone xy xyz oxygen xy"})
    assert good["passed"] and good["evidence"]["first_merge"] == ["x", "y"]
    bad = _check("first-merge", {"corpus": "the cat sat on the mat"})
    assert not bad["passed"] and bad["evidence"]["first_merge"] == ["a", "t"] and "not 'x' + 'y'" in bad["reason"]


def test_unseen_word_and_one_token_word():
    assert _check("unseen-word", {"corpus": "low low low lower lower newest newest newest widest widest"})["passed"]
    bad = _check("unseen-word", {"corpus": "the cat sat on the mat"})
    assert not bad["passed"] and bad["evidence"]["pieces"] == list("lowest")
    assert not _check("unseen-word", {"corpus": "lowest low"})["passed"]  # the word itself is not allowed
    assert _check("one-token-word", {"corpus": " ".join(["transformer"] * 20)})["evidence"]["pieces"] == ["transformer"]
    assert not _check("one-token-word", {"corpus": "transformers are models"})["passed"]


def test_a_verdict_carries_the_tab_and_its_query_filled_from_the_answer():
    v = _check("first-merge", {"corpus": "xy xy"})
    assert set(v) >= {"challenge", "passed", "reason", "evidence", "hint", "tab", "try_query", "seconds"}
    c = challenges.challenge(FLIP)
    assert challenges.try_query(c, {"a": "A b.", "b": "A c."}) == {
        "tab": "pipelines-classify", "text": "A b.\nA c.", "batch": "1"}


def test_each_goal_shows_in_its_tabs_section_and_on_its_chapter_card():
    import html
    import re as regex

    import gradio as gr

    from app import TABS
    from components.shell import challenges as page

    keys = [key for _, _, key, _ in TABS]
    shown = [c["id"] for key in keys for c in page.for_tab(key)]
    assert sorted(shown) == sorted(c.id for c in challenges.CHALLENGES)  # each in exactly one tab's section
    assert sum(len(page.for_chapter(n)) for n in range(1, 12)) == len(challenges.CHALLENGES)
    with gr.Blocks():
        section = page.section("pipelines", page.for_tab("pipelines"))
        assert page.section("anatomy", page.for_tab("anatomy")) is None  # no goal there: no section
    found = regex.findall(r"data-ch='([^']*)'", section.value)
    assert [json.loads(html.unescape(f))["id"] for f in found] == [c["id"] for c in page.for_tab("pipelines")]
    assert "<script" not in section.value and 'id=\'ch-pipelines-flip-sentiment\'' in section.value
