"""The text a tokenizer is trained on: a shipped corpus, pasted text, or an uploaded .txt.

Every bad input raises `InputError` saying what is wrong and what to do; the size cap keeps
one training inside a request's time budget on a small CPU.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

from backend.runtime.errors import InputError
from backend.runtime.validation import clean_text


def _repository() -> str:
    """The repository's root: the nearest folder above this file that holds both backend/ and assets/. Found, not
    counted in parent folders, so the shipped data stay found wherever this package sits in backend/."""
    here = os.path.dirname(os.path.abspath(__file__))
    while not (os.path.isdir(os.path.join(here, "assets")) and os.path.isdir(os.path.join(here, "backend"))):
        up = os.path.dirname(here)
        if up == here:
            raise RuntimeError(f"no folder above {__file__} holds both backend/ and assets/: the app's data are missing")
        here = up
    return here


ASSETS = os.path.join(_repository(), "assets")  # the shipped data (seq2seq_data.py reads its files here too)
SCRATCH_DIR = os.path.join(ASSETS, "data", "scratch")
MAX_CHARS = 2_000_000  # ~2 MB of English: the library trains it in about a second
PASTE, UPLOAD = "paste", "upload"
SHIPPED = {
    "tokenizers": "a short essay on tokenizers written for this tab (3 KB)",
    "glossary": "the Semantic search tab's NLP glossary (62 KB)",
    "sentences": "the Train tab's labelled sentences: emotion, sentiment, NER (140 KB)",
}
CHOICES = tuple(SHIPPED) + (PASTE, UPLOAD)


def _jsonl(path: str, field: str) -> list[str]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                value = row.get(field)
                out.append(" ".join(value) if isinstance(value, list) else str(value))
    return out


@lru_cache(maxsize=None)
def shipped(name: str) -> str:
    """One shipped corpus as a single text, one document per line (see assets/data/scratch/README.md)."""
    if name == "tokenizers":
        with open(os.path.join(SCRATCH_DIR, "tokenizers.txt"), encoding="utf-8") as fh:
            return fh.read()
    if name == "glossary":
        return "\n".join(_jsonl(os.path.join(ASSETS, "corpus", "glossary.jsonl"), "text"))
    if name == "sentences":
        lines = []
        for kind, field in (("emotion", "text"), ("sentiment", "text"), ("ner", "tokens")):
            for split in ("train", "validation", "test"):
                lines += _jsonl(os.path.join(ASSETS, "data", kind, f"{split}.jsonl"), field)
        return "\n".join(lines)
    raise InputError(f"corpus must be one of {', '.join(CHOICES)}; got {name!r}.")


def _checked(text: str, what: str) -> str:
    if len(text) > MAX_CHARS:
        raise InputError(f"The {what} is {len(text):,} characters long; at most {MAX_CHARS:,} are allowed "
                         "(a tokenizer learns its merges from far less). Use a part of it.")
    text = clean_text(text)
    if not any(ch.isalnum() for ch in text):
        raise InputError(f"The {what} has no letters or digits to learn from: paste or upload some text.")
    return text


def read_upload(path) -> str:
    """An uploaded file's text: UTF-8, not binary, within the size cap."""
    if not path or not isinstance(path, (str, os.PathLike)):
        raise InputError("No file was uploaded: choose a .txt file, or pick a shipped corpus.")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError("The uploaded file could not be read: upload it again.")
    size = os.path.getsize(path)
    if size > 4 * MAX_CHARS:  # even 4-byte characters cannot make it fit
        raise InputError(f"The file is {size / 1e6:.1f} MB; at most about {MAX_CHARS / 1e6:.0f} MB of text is allowed.")
    with open(path, "rb") as fh:
        raw = fh.read()
    if b"\x00" in raw[:65536]:
        raise InputError("The file looks binary (it has NUL bytes): upload plain UTF-8 text (.txt).")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"The file is not UTF-8 text (bad byte at position {exc.start:,}): "
                         "save it as UTF-8 plain text and upload it again.") from None
    return _checked(text, "uploaded file")


def corpus_text(corpus, text=None, upload=None) -> tuple[str, str]:
    """(what the corpus is, its text) for a corpus choice: a shipped name, 'paste' or 'upload'."""
    name = corpus.strip().lower() if isinstance(corpus, str) else corpus
    if name in (None, ""):
        name = "tokenizers"
    if text is not None and not isinstance(text, str):  # refused whichever corpus is chosen
        raise InputError("text: the pasted text must be text; paste some, or leave it empty.")
    if name == PASTE:
        if text is None:
            raise InputError("The pasted text must be text: paste some, or pick a shipped corpus.")
        return "pasted text", _checked(text, "pasted text")
    if name == UPLOAD:
        return f"uploaded file {os.path.basename(str(upload))[:80]}", read_upload(upload)
    if not isinstance(name, str) or name not in SHIPPED:
        raise InputError(f"corpus must be one of {', '.join(CHOICES)}; got {str(corpus)[:60]!r}.")
    return f"shipped corpus '{name}': {SHIPPED[name]}", shipped(name)
