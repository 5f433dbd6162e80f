"""Named-entity data: the shipped BIO set, uploads (CoNLL columns or JSONL spans), and the
alignment of word tags to sub-word tokens the book's chapter 4 uses.

A sentence is a list of words and one BIO tag per word (`B-PER`, `I-PER`, `O`, ...). The model
reads sub-word pieces: the first piece of each word carries the word's label and every other
piece (and every special token) gets -100, which the cross-entropy loss ignores. Predictions
are read back from the first pieces only, so a word always gets exactly one tag.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from backend.runtime import json_input
from backend.runtime.errors import InputError

DATA_DIR = Path(__file__).resolve().parents[3] / "assets" / "data" / "ner"
SPLITS = ("train", "validation", "test")
TYPES = ("PER", "ORG", "LOC", "MISC")  # CoNLL-2003
IGNORE = -100  # the label of pieces the loss skips (torch's CrossEntropyLoss ignore_index)
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
CONLL_EXTS = ("conll", "txt", "iob", "bio", "tsv")  # an upload read as CoNLL columns
JSONL_EXTS = ("jsonl", "json")  # an upload read as JSON Lines
MAX_SENTENCES = 20_000
MAX_WORDS = 200  # per sentence
_TAG = re.compile(r"^(O|[BI]-[A-Za-z][A-Za-z0-9_.]{0,29})$")


def bio_labels(types=TYPES) -> list[str]:
    """`O` then `B-X`, `I-X` for each type: the label order of every model trained here."""
    out = ["O"]
    for t in types:
        out += [f"B-{t}", f"I-{t}"]
    return out


@dataclass
class Sentence:
    tokens: list[str]
    tags: list[str]


@dataclass
class NerData:
    labels: list[str]
    train: list[Sentence]
    validation: list[Sentence]
    test: list[Sentence]
    source: str = "shipped"
    notices: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[Sentence]:
        return {"train": self.train, "validation": self.validation, "test": self.test}[name]


def check_sentence(tokens, tags, where: str) -> Sentence:
    if not isinstance(tokens, list) or not isinstance(tags, list):
        raise InputError(f"{where}: 'tokens' and 'tags' must be lists.")
    if len(tokens) != len(tags):
        raise InputError(f"{where}: {len(tokens)} tokens but {len(tags)} tags; give one tag per token.")
    if not tokens:
        raise InputError(f"{where}: the sentence has no tokens.")
    if len(tokens) > MAX_WORDS:
        raise InputError(f"{where}: {len(tokens)} tokens; at most {MAX_WORDS} per sentence.")
    for t in tokens:
        if not isinstance(t, str) or not t.strip() or any(c.isspace() for c in t):
            raise InputError(f"{where}: every token must be a non-empty word without spaces, got {t!r}.")
    for t in tags:
        if not isinstance(t, str) or not _TAG.match(t):
            raise InputError(f"{where}: {t!r} is not a BIO tag (O, B-TYPE or I-TYPE).")
    return Sentence(list(tokens), list(tags))


def read_jsonl(path: str | Path) -> list[Sentence]:
    """One `{"tokens": [...], "tags": [...]}` per line (the shipped format)."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            out.append(check_sentence(row.get("tokens"), row.get("tags"), f"line {n}"))
    return out


def load_shipped(directory: str | Path | None = None) -> NerData:
    """The shipped splits (assets/data/ner), with the nine CoNLL-2003 BIO labels."""
    directory = Path(directory) if directory else DATA_DIR
    parts = {s: read_jsonl(directory / f"{s}.jsonl") for s in SPLITS}
    return NerData(bio_labels(), **parts)


def labels_of(sentences: list[Sentence]) -> list[str]:
    """`bio_labels` over the entity types these sentences use, CoNLL's first, then the rest sorted."""
    found = {t[2:] for s in sentences for t in s.tags if t != "O"}
    return bio_labels([t for t in TYPES if t in found] + sorted(found - set(TYPES)))


# ----------------------------------------------------------------------------- alignment
# A word may have no piece at all: the uncased tokenizer strips accents, so a lone combining mark
# ("\u0301", a word of its own for `words_with_offsets`) becomes nothing, and the word ids then
# skip it ([CLS] abc e [SEP] -> None, 0, 5, None for 7 words). Everything here reads word ids as
# indexes into the words, never as positions among the tokens.
def align_labels(word_ids: list[int | None], word_labels: list[int]) -> list[int]:
    """Per-token labels from per-word labels: the first piece of a word carries its label, the
    other pieces and the special tokens get IGNORE (`word_ids` as a fast tokenizer gives them);
    a word without pieces is not trained on."""
    out, previous = [], None
    for w in word_ids:
        if w is None or w == previous or not 0 <= w < len(word_labels):
            out.append(IGNORE)
        else:
            out.append(word_labels[w])
        previous = w
    return out


def first_piece_mask(word_ids: list[int | None]) -> list[bool]:
    """True at the first piece of each word that has pieces."""
    out, previous = [], None
    for w in word_ids:
        out.append(w is not None and w != previous)
        previous = w
    return out


def first_pieces(word_ids: list[int | None], n_words: int) -> list[int | None]:
    """Per word, the position of its first piece, or None (no piece: a stripped combining mark, or
    a word cut off by truncation)."""
    out: list[int | None] = [None] * n_words
    previous = None
    for pos, w in enumerate(word_ids):
        if w is not None and w != previous and 0 <= w < n_words and out[w] is None:
            out[w] = pos
        previous = w
    return out


def encode(tokenizer, sentences: list[list[str]], max_length: int = 128):
    """Tokenise pre-split sentences (`is_split_into_words`): a BatchEncoding, its word_ids per row."""
    enc = tokenizer(sentences, is_split_into_words=True, truncation=True, max_length=max_length,
                    padding=True, return_tensors="pt")
    return enc, [enc.word_ids(i) for i in range(len(sentences))]


# ----------------------------------------------------------------------------- uploads
def parse_conll(text: str) -> list[Sentence]:
    """CoNLL-style columns: one word per line, the word first and its BIO tag last, a blank line
    between sentences; `-DOCSTART-` lines are skipped. IOB1 files (an entity starting with I-) are
    read as they are: the metrics treat an I- after O as the start of an entity."""
    if len(text.encode("utf-8", "replace")) > MAX_UPLOAD_BYTES:
        raise InputError(f"The file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
    out, tokens, tags = [], [], []

    def flush(n):
        if tokens:
            out.append(check_sentence(list(tokens), list(tags), f"sentence ending at line {n}"))
            tokens.clear()
            tags.clear()

    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        cols = line.split()
        if not cols:
            flush(n)
            continue
        if cols[0] == "-DOCSTART-":
            flush(n)
            continue
        if len(cols) < 2:
            raise InputError(f"line {n}: expected a word and a tag separated by whitespace, got {line.strip()!r}.")
        tokens.append(cols[0])
        tags.append(cols[-1])
        if len(out) >= MAX_SENTENCES:
            raise InputError(f"More than {MAX_SENTENCES} sentences; upload fewer.")
    flush(len(lines))
    if not out:
        raise InputError("The file has no tagged sentences.")
    return out


_WORD = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]", re.UNICODE)


def words_with_offsets(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def parse_span_jsonl(text: str) -> list[Sentence]:
    """JSON Lines of `{"text": "...", "entities": [{"start": 0, "end": 13, "label": "PER"}, ...]}`
    (character offsets, end exclusive; `spans` and `type` are accepted too). The text is split
    into words; an entity must start and end on word boundaries."""
    if len(text.encode("utf-8", "replace")) > MAX_UPLOAD_BYTES:
        raise InputError(f"The file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json_input.loads(line, f"line {n}")
        except json.JSONDecodeError as exc:
            raise InputError(f"line {n}: not valid JSON ({exc.msg}).") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise InputError(f"line {n}: expected an object with a 'text' string.")
        spans = row.get("entities", row.get("spans", []))
        if not isinstance(spans, list):
            raise InputError(f"line {n}: 'entities' must be a list.")
        words = words_with_offsets(row["text"])
        tags = ["O"] * len(words)
        for sp in spans:
            if not isinstance(sp, dict):
                raise InputError(f"line {n}: each entity must be an object with start, end and label.")
            label = sp.get("label", sp.get("type"))
            start, end = sp.get("start"), sp.get("end")
            if not isinstance(label, str) or not isinstance(start, int) or not isinstance(end, int) or end <= start:
                raise InputError(f"line {n}: each entity needs integer start < end and a label, got {sp!r}.")
            inside = [i for i, (_, s, e) in enumerate(words) if s >= start and e <= end]
            if not inside or words[inside[0]][1] != start or words[inside[-1]][2] != end:
                raise InputError(f"line {n}: the entity {row['text'][start:end]!r} ({start}-{end}) does not "
                                 "start and end on word boundaries.")
            if any(tags[i] != "O" for i in inside):
                raise InputError(f"line {n}: entities overlap at {row['text'][start:end]!r}.")
            for k, i in enumerate(inside):
                tags[i] = ("B-" if k == 0 else "I-") + label.upper()
        out.append(check_sentence([w for w, _, _ in words], tags, f"line {n}"))
        if len(out) > MAX_SENTENCES:
            raise InputError(f"More than {MAX_SENTENCES} sentences; upload fewer.")
    if not out:
        raise InputError("The file has no sentences.")
    return out
