"""The word-shape function a token classifier trained here reads beside each token (chapter 4's NER models:
backend/engines/ner/token_classification.py), as snippet lines: the /train_ner snippet and the Why tab's NER
snippet both write it out, so it is written once here. 0 is a special token's (no word)."""

from __future__ import annotations

WORD_SHAPE = [
    "def word_shape(word):  # the word as written: 1 lower, 2 Capitalised, 3 ALLCAPS, 4 digits, 5 punctuation, 6 other",
    "    if any(c.isdigit() for c in word):",
    "        return 4",
    "    letters = [c for c in word if c.isalpha()]",
    "    if not letters:",
    "        return 5",
    "    if all(c.isupper() for c in letters):",
    "        return 3 if len(letters) > 1 else 2",
    "    if word[0].isupper() or (not word[0].isalpha() and letters[0].isupper()):",
    "        return 2",
    "    return 1 if all(c.islower() for c in letters) else 6"]
