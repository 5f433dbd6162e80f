"""Checks on named entities (chapters 1 and 4): the NER model on the learner's sentence, in English, and in
German read by the model trained on English alone."""

from __future__ import annotations

from backend.challenges import models
from backend.challenges.words import words

MAX_WORDS = 25
# words a German sentence has and an English one does not (the check that the sentence is German at all)
GERMAN = {"der", "die", "das", "und", "ist", "nicht", "mit", "von", "zu", "den", "dem", "des", "ein", "eine",
          "einen", "im", "auf", "für", "sich", "auch", "es", "sie", "er", "wir", "ich", "nach", "bei", "aus",
          "war", "hat", "wird", "sind", "heute", "gestern", "morgen", "besuchte", "traf", "wohnt", "arbeitet",
          "fuhr", "flog", "nach", "über", "unter", "zum", "zur", "vom", "beim", "aber", "oder", "wurde"}


def three_types(v: dict):
    """Chapter 1: a sentence in which the NER model finds a person, an organisation and a place."""
    n = len(words(v["text"]))
    if n > MAX_WORDS:
        return False, f"The sentence has {n} words; keep it to {MAX_WORDS}.", {}
    found = models.entities(v["text"])
    kinds = {e["label"] for e in found}
    missing = [k for k in ("PER", "ORG", "LOC") if k not in kinds]
    ev = {"entities": found}
    if not missing:
        return True, "The model finds " + ", ".join(f"{e['label']} '{e['text']}'" for e in found) + ".", ev
    return False, f"No {', '.join(missing)} found; the model found {len(found)} entit(ies): " + (
        ", ".join(f"{e['label']} '{e['text']}'" for e in found) or "none") + ".", ev


def _tagged(found: list[dict], span: str, label: str) -> bool:
    return any(e["label"] == label and e["text"].strip().lower() == span.strip().lower() for e in found)


def german_tagged_right(v: dict):
    """Chapter 4: a German sentence in which the model trained on English tags the person and the place
    the learner names, each whole and with its type."""
    text = v["text"]
    if not GERMAN & set(words(text)):
        return False, "That does not read as German: write the sentence in German (der, die, und, besuchte...).", {}
    for key in ("person", "place"):
        if v[key].lower() not in text.lower():
            return False, f"The {key} '{v[key]}' is not in the sentence: name one that is.", {}
    found = models.entities(text)
    ev = {"entities": found, "trained_on": "English sentences only"}
    person, place = _tagged(found, v["person"], "PER"), _tagged(found, v["place"], "LOC")
    if person and place:
        return True, (f"Trained on English only, the model tags '{v['person']}' as PER and '{v['place']}' as LOC in "
                      "German: names look alike across languages."), ev
    wrong = [f"'{v[k]}' as {lab}" for k, lab, ok in (("person", "PER", person), ("place", "LOC", place)) if not ok]
    return False, f"The model did not tag {' nor '.join(wrong)}; it found " + (
        ", ".join(f"{e['label']} '{e['text']}'" for e in found) or "nothing") + ".", ev
