"""The topic words of a question that its text never mentions (the second half of "no answer")."""

from __future__ import annotations

import pytest

from backend.engines.qa.question_terms import absent_terms, forms, topic_terms

RAIL = ("A new high-speed railway between Madrid and Lisbon will open in 2030. The line will cost 7 billion euros, "
        "and trains will take about three hours.")


@pytest.mark.parametrize("question, absent", [
    ("How much will a ticket cost?", ["ticket"]),  # the asked-for kind (a sum) is there, about the line
    ("Which company funded the railway?", ["funded"]),
    ("When will the railway open?", []),
    ("How long will trains take between Madrid and Lisbon?", []),  # "long", "take": type word and light verb
    ("What does the line cost?", []),
    ("Which city will the railway open in?", []),  # "city" names the answer's type
    ("Which city does the railway reach from Madrid?", ["reach"]),  # a paraphrasing verb not on the list counts
])
def test_absent_topic_words(question, absent):
    assert absent_terms(question, RAIL) == absent


def test_inflected_and_irregular_forms_count_as_present():
    text = "Every winter the lake freezes; the nerpa, a seal, lives there. The bridge was built by Roebling, funding it himself."
    assert absent_terms("How long does the lake stay frozen?", text) == []
    assert absent_terms("Which seal lived in the lake?", text) == []
    assert absent_terms("Who funded the bridge?", text) == []  # funded / funding: one Snowball stem
    assert absent_terms("Who builds bridges?", text) == []
    assert forms("lives") & forms("live") and forms("frozen") & forms("freeze") and forms("studied") & forms("study")


@pytest.mark.parametrize("a, b", [("stopped", "stop"), ("planned", "plan"), ("tried", "try"), ("mice", "mouse"),
                                  ("lives", "lived"), ("funded", "funding"), ("built", "builds")])
def test_inflections_match(a, b):
    assert forms(a) & forms(b)
    assert absent_terms(f"When was it {a}?", f"They {b} it.") == []


@pytest.mark.parametrize("a, b", [("university", "universe"), ("policy", "police"), ("news", "new"),
                                  ("corner", "corn")])
def test_different_words_do_not_match(a, b):
    """The old suffix rules and 5-letter prefix joined these; the Snowball stemmer keeps them apart."""
    assert not forms(a) & forms(b)
    assert absent_terms(f"What did the {a} say?", f"The {b} said nothing.") == [a]


def test_the_issue_case_stopped_is_in_the_text():
    text = "The harbour police stop every ship that enters after dark."
    assert absent_terms("When was the ship stopped?", text) == []


def test_function_words_type_words_and_numbers_are_not_topic():
    assert topic_terms("How many of the 300 homes were flooded in Gloucester?") == ["homes", "flooded", "gloucester"]
    assert topic_terms("Which country makes it?") == []
    assert topic_terms("") == [] and absent_terms("", RAIL) == []
