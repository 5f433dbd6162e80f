"""The NER task's data: the shipped set, or a learner's upload read as CoNLL columns or JSONL
(`{"tokens", "tags"}` rows, or `{"text", "entities"}` character spans turned into BIO words).

Uploads are hostile until checked: size, encoding, one tag per word, BIO tags only, sentence
count and length, entity types are all refused with a sentence that says what to fix (the
server's parsers name the line). An upload has no splits: it is split 70/15/15 with a fixed
seed, and the result says so.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from backend.engines.classify.datasets import EVAL_SHARE
from backend.engines.ner import data as ner_data
from backend.engines.ner.data import CONLL_EXTS, JSONL_EXTS
from backend.runtime import json_input
from backend.runtime.errors import InputError
from backend.runtime.validation import clean_text

SOURCES = ("shipped", "upload")
MAX_TYPES = 20  # entity types in one upload (labels = 1 + 2 per type)
MIN_SENTENCES = 10  # so every split gets some
SHIPPED_NAME = "NER (shipped: PER / ORG / LOC / MISC)"


@dataclass
class NerSet:
    """Sentences in three splits, the BIO labels a model trained on them predicts, provenance."""

    name: str
    source: str
    labels: list[str]
    train: list[ner_data.Sentence]
    validation: list[ner_data.Sentence]
    test: list[ner_data.Sentence]
    notices: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[ner_data.Sentence]:
        return {"train": self.train, "validation": self.validation, "test": self.test}[name]

    def describe(self) -> dict:
        sizes = {s: len(self.split(s)) for s in ner_data.SPLITS}
        entities = {s: _entity_counts(self.split(s)) for s in ner_data.SPLITS}
        return {"name": self.name, "source": self.source, "labels": list(self.labels),
                "types": [l[2:] for l in self.labels if l.startswith("B-")], "sizes": sizes,
                "entities": entities, "notes": list(self.notices)}


def _entity_counts(sentences: list[ner_data.Sentence]) -> dict[str, int]:
    from backend.engines.ner.metrics import entities

    out: dict[str, int] = {}
    for s in sentences:
        for t, _, _ in entities(s.tags):
            out[t] = out.get(t, 0) + 1
    return dict(sorted(out.items()))


def load(source: str = "shipped", file: str | None = None, seed: int = 0) -> NerSet:
    """The shipped NER set, or (source="upload") the file at `file`."""
    if source == "upload":
        return read_upload(file, seed)
    d = ner_data.load_shipped()
    return NerSet(SHIPPED_NAME, "shipped", list(d.labels), d.train, d.validation, d.test)


def _text(path: Path) -> str:
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise InputError("The file is not text (is it a spreadsheet or a binary file?). Upload CoNLL columns "
                         "(.conll / .txt) or JSON Lines (.jsonl).")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("The file is not UTF-8 text: save it as UTF-8 and upload it again.") from None


def _json_rows(text: str) -> list[tuple[int, object]]:
    """(line number, value) of every non-empty line, read safely (a value nested too deep is refused)."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((n, json_input.loads(line, f"line {n}")))
            except json.JSONDecodeError as exc:
                raise InputError(f"line {n}: not valid JSON ({exc.msg}). A .jsonl file holds one JSON object "
                                 "a line.") from None
            if len(rows) > ner_data.MAX_SENTENCES:
                raise InputError(f"More than {ner_data.MAX_SENTENCES:,} sentences; upload fewer.")
    return rows


def _tokens_jsonl(rows: list[tuple[int, object]]) -> list[ner_data.Sentence]:
    """`{"tokens": [...], "tags": [...]}` per line, with the line named in every refusal."""
    out = []
    for n, row in rows:
        if not isinstance(row, dict) or "tokens" not in row or "tags" not in row:
            raise InputError(f"line {n}: expected an object with 'tokens' and 'tags' lists (or, on every "
                             "line, 'text' and 'entities').")
        out.append(ner_data.check_sentence(row["tokens"], row["tags"], f"line {n}"))
    return out


def parse(text: str, ext: str) -> list[ner_data.Sentence]:
    """Sentences from an upload's text: CoNLL columns, or JSONL (token rows or character spans,
    told apart by the first row's keys)."""
    if not text.strip():
        raise InputError("The file is empty: it needs sentences, as CoNLL lines ('word tag', a blank line "
                         "between sentences) or JSON Lines.")
    if ext in JSONL_EXTS:
        rows = _json_rows(text)
        head = rows[0][1]
        if isinstance(head, dict) and "text" in head and "tokens" not in head:
            return ner_data.parse_span_jsonl(text)
        return _tokens_jsonl(rows)
    if text.lstrip().startswith("{"):
        raise InputError("The file looks like JSON Lines: name it .jsonl (or upload CoNLL columns: one "
                         "'word tag' a line).")
    return ner_data.parse_conll(text)


def _split(sentences: list[ner_data.Sentence], seed: int) -> dict[str, list[ner_data.Sentence]]:
    order = list(range(len(sentences)))
    random.Random(f"ner-{seed}").shuffle(order)
    n_eval = max(1, round(len(order) * EVAL_SHARE))
    pick = lambda idx: [sentences[i] for i in idx]  # noqa: E731
    return {"validation": pick(order[:n_eval]), "test": pick(order[n_eval:2 * n_eval]),
            "train": pick(order[2 * n_eval:])}


def read_upload(path: str | None, seed: int = 0) -> NerSet:
    """An uploaded file -> NerSet, or an InputError that says what is wrong with it."""
    if not path:
        raise InputError("source is 'upload' but no file came: upload CoNLL columns (.conll / .txt: "
                         "'word tag' a line, a blank line between sentences) or JSON Lines (.jsonl).")
    p = Path(path)
    ext = p.suffix.lower().lstrip(".")
    if ext not in CONLL_EXTS + JSONL_EXTS:
        raise InputError(f"'.{ext}' files are not read here: upload .conll / .txt (CoNLL columns) or "
                         ".jsonl ({\"tokens\", \"tags\"} or {\"text\", \"entities\"} per line).")
    size = p.stat().st_size
    if size > ner_data.MAX_UPLOAD_BYTES:
        raise InputError(f"The file is {size / 1e6:.1f} MB; at most {ner_data.MAX_UPLOAD_BYTES // (1024 * 1024)} MB "
                         "can be trained on here. Upload a sample.")
    sentences = parse(_text(p), ext)
    for s in sentences:  # lone surrogates (JSON escapes) would break the tokenizer mid-run
        s.tokens = [clean_text(t) for t in s.tokens]
    if len(sentences) < MIN_SENTENCES:
        raise InputError(f"Only {len(sentences)} sentence(s): at least {MIN_SENTENCES} are needed (some to train "
                         "on, some to validate, some to test).")
    labels = ner_data.labels_of(sentences)
    types = [l[2:] for l in labels if l.startswith("B-")]
    if not types:
        raise InputError("No sentence has an entity (every tag is O): there is nothing to learn.")
    if len(types) > MAX_TYPES:
        raise InputError(f"{len(types)} entity types ({', '.join(types[:6])}, ...); at most {MAX_TYPES}. "
                         "Is the last column really the NER tag?")
    by = _split(sentences, seed)
    notices = [f"Split 70/15/15 with seed {seed}: the file has no splits."]
    return NerSet(p.name[:60], "upload", labels, by["train"], by["validation"], by["test"], notices)
