"""A reference summary or translation belongs to one text: the Pipelines tab keeps it only with the text
it was written for (an example's own reference; cleared when the text is edited)."""

from __future__ import annotations

import gradio as gr

from components.pipelines.examples import (
    LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, SUMMARY_EXAMPLE, SUMMARY_REFERENCE, EIFFEL, EIFFEL_SUMMARY,
)


# A reference belongs to one text: an example sets both; the learner's own text clears it, so
# no score against another text's reference is ever shown.
REFERENCE_NOTE = "A reference belongs to one text: editing the text (or the languages) clears it."
REFERENCE_CLEARED = ("**Reference cleared:** it was written for the previous text. Paste one written for "
                     "this text to get a score, or run without one.")


# The examples' (text, reference) pairs: an example's reference sent with another text (edited
# without a keystroke the page noticed, or by a script) is dropped, never scored against.
SUMMARY_PAIRS = [(SUMMARY_EXAMPLE, SUMMARY_REFERENCE), (EIFFEL, EIFFEL_SUMMARY), (LETTER, LETTER_SUMMARY)]
TRANSLATION_PAIRS = [(LETTER_START, LETTER_GERMAN_START)]


def _own_reference(text, reference, pairs) -> tuple:
    """(the reference to score against, the example text it belongs to if it was dropped)."""
    ref = reference.strip() if isinstance(reference, str) else reference
    for example_text, example_ref in pairs:
        if ref == example_ref and (text.strip() if isinstance(text, str) else text) != example_text:
            return "", example_text
    return reference, None


def _say_dropped(r: dict, example_text) -> None:
    if example_text is not None:
        r["reference_dropped"] = f"it is the example's reference for: {example_text[:60]}…"
        r["notices"].insert(0, "The reference was not used: it belongs to an example's text, not to this one. "
                               "Paste a reference written for this text to get a score.")


def _text_edited(reference):
    """The learner changed the text: drop the reference that belonged to the old one."""
    if not (reference or "").strip():
        return gr.skip(), gr.skip()
    return "", REFERENCE_CLEARED


def _reference_set(reference):
    """An example (or the learner) put a reference in: the usual note again."""
    return REFERENCE_NOTE if (reference or "").strip() else gr.skip()


def _text_changed(pairs):
    """The text changed by any means (a link, a hand-off, a Start button: no keystroke, so no `input`): an
    example's reference left in the box for another text is cleared there, as the run would drop it."""
    def changed(text, reference):
        _, dropped = _own_reference(text if isinstance(text, str) else "", reference, pairs)
        return ("", REFERENCE_CLEARED) if dropped is not None else (gr.skip(), gr.skip())
    return changed


def _link_reference(edits: list, reference, note, pairs=()) -> None:
    for box in edits:
        box.input(_text_edited, [reference], [reference, note], queue=False, api_visibility="private")
    if pairs:
        edits[0].change(_text_changed(pairs), [edits[0], reference], [reference, note], queue=False,
                        api_visibility="private")
    reference.change(_reference_set, [reference], [note], queue=False, api_visibility="private")
