"""Does a span answer the kind of question asked (backend/engines/qa/answer_type.py)? The reader's two
kinds of held-out mistake: a count for a thing, and another thing's price."""

from __future__ import annotations

import pytest

from backend.engines.qa import answer_type as at


@pytest.mark.parametrize("span, expected", [
    ("about 300 residents", (True, "residents")), ("50,000", (True, None)), ("three nights", (True, "nights")),
    ("399 euros", (True, "euros")), ("€12", (True, None)), ("8 percent", (True, "percent")),
    ("two ceramic vases", (False, None)), ("Route 66", (False, None)), ("one has started to squeak", (False, None)),
    ("the bar downstairs", (False, None)), ("up to 145 kilometres per hour", (True, "kilometres")),
])
def test_a_number_with_its_unit_is_a_quantity_and_a_number_starting_a_noun_phrase_is_not(span, expected):
    assert at.quantity(span) == expected


LAND = ("The council has bought the old rail yard beside the river. About 300 residents signed a petition asking "
        "for a say in its future. Work to clear the site starts in May.")
VACUUM = ("The Kleen R9 robot vacuum costs 349 euros in most shops. A replacement brush is sold separately, and the "
          "battery lasts about two hours.")


def _span(context: str, text: str) -> tuple[int, int]:
    s = context.index(text)
    return s, s + len(text)


def test_a_count_of_people_does_not_answer_what_the_land_will_become():
    why = at.mismatch("What will the rail yard become?", LAND, *_span(LAND, "About 300 residents"))
    assert why and "number of residents" in why
    assert at.mismatch("How many residents signed the petition?", LAND, *_span(LAND, "About 300 residents")) is None


def test_the_products_price_does_not_answer_the_replacement_parts_price():
    why = at.mismatch("How much does a replacement brush cost?", VACUUM, *_span(VACUUM, "349 euros"))
    assert why and "'replacement' is not near '349 euros'" in why
    assert at.mismatch("How much does the Kleen R9 cost?", VACUUM, *_span(VACUUM, "349 euros")) is None


def test_a_count_of_another_unit_or_a_bare_count_for_money_does_not_answer():
    reef = "The reef lies eleven miles off the coast."
    assert "counts ships" in at.mismatch("How many ships sank on the reef?", reef, *_span(reef, "eleven miles"))
    text = "The bakery bakes about 200 loaves a day."
    assert "names none" in at.mismatch("How much does a loaf cost?", text, *_span(text, "about 200"))
    assert at.mismatch("How long does the battery last?", VACUUM, *_span(VACUUM, "about two hours")) is None


def test_a_thing_answers_a_what_question_and_a_quantity_a_quantity_question():
    text = "It contained two ceramic vases. The race was won in 2 hours 16 minutes."
    assert at.mismatch("What did the parcel contain?", text, *_span(text, "two ceramic vases")) is None
    assert at.mismatch("What was the winning time?", text, *_span(text, "2 hours 16 minutes")) is None


def test_the_subject_named_sentences_before_still_owns_its_price():
    """A review names its product first and says "it" after: the price two sentences on is the product's."""
    review = ("I bought the Vortex Pro 900 blender in May. It crushes ice in a minute. The jug is easy to rinse. "
              "At 129 euros it is not cheap.")
    assert at.mismatch("How much did the Vortex Pro 900 cost?", review, *_span(review, "129 euros")) is None
    assert at.asks_money("What do students pay for admission?") and at.asks_quantity("What is the order worth?")
    assert not at.asks_money("Which optional extra costs 49 pounds?")
