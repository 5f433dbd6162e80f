"""Labelled text for the Train tab: the sets the project ships, or a person's upload.

A `Dataset` is three fixed splits of (text, label) with the label order fixed once, so every
method is trained and scored on exactly the same examples. Uploads (CSV or JSONL with a text
and a label column) are read defensively: every refusal says what is wrong and what to do.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from backend.runtime import json_input
from backend.runtime.errors import InputError

DATA_DIR = Path(__file__).resolve().parents[3] / "assets" / "data"
SHIPPED = ("emotion", "sentiment")
SPLITS = ("train", "validation", "test")
TEXT_GUESSES = ("text", "sentence", "review", "content", "body")
LABEL_GUESSES = ("label", "labels", "class", "category", "target", "sentiment", "emotion")
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
EVAL_SHARE = 0.15  # an upload without splits: validation and test each take this share (70/15/15)
MAX_ROWS = 20_000
MAX_LABELS = 20
MIN_PER_LABEL = 5  # so each label has >= 3 train, 1 validation and 1 test example
MAX_TEXT_CHARS = 2_000  # the encoder reads 256 tokens; longer texts are cut with a notice
MAX_LABEL_CHARS = 60


@dataclass
class Dataset:
    name: str
    labels: list[str]
    train: list[tuple[str, int]]
    validation: list[tuple[str, int]]
    test: list[tuple[str, int]]
    source: str = "shipped"  # shipped | upload
    notices: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[tuple[str, int]]:
        return {"train": self.train, "validation": self.validation, "test": self.test}[name]

    def counts(self) -> dict:
        out = {}
        for s in SPLITS:
            c = Counter(y for _, y in self.split(s))
            out[s] = {l: c.get(i, 0) for i, l in enumerate(self.labels)}
        return out

    def describe(self) -> dict:
        return {"name": self.name, "source": self.source, "labels": list(self.labels),
                "counts": self.counts(), "sizes": {s: len(self.split(s)) for s in SPLITS},
                "notices": list(self.notices)}


def _indexed(rows: list[tuple[str, str]], labels: list[str]) -> list[tuple[str, int]]:
    pos = {l: i for i, l in enumerate(labels)}
    return [(t, pos[l]) for t, l in rows]


def _read_jsonl(path: Path) -> list[tuple[str, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)  # the project's own shipped file
            rows.append((obj["text"], obj["label"]))
    return rows


def load_shipped(name: str) -> Dataset:
    """One of the sets in assets/data (labels in their README order: first seen in train)."""
    if name not in SHIPPED:
        raise InputError(f"Unknown dataset '{name}'. Choose one of: {', '.join(SHIPPED)}, or upload a file.")
    splits = {s: _read_jsonl(DATA_DIR / name / f"{s}.jsonl") for s in SPLITS}
    order = {"emotion": ["sadness", "joy", "love", "anger", "fear", "surprise"],
             "sentiment": ["negative", "neutral", "positive"]}[name]
    labels = [l for l in order if any(y == l for _, y in splits["train"])]
    return Dataset(name, labels, *(_indexed(splits[s], labels) for s in SPLITS))


# ----------------------------------------------------------------------------- uploads
def _decode(raw: bytes) -> str:
    for enc in ("utf-8-sig", "utf-16"):
        try:
            text = raw.decode(enc)
            if "\x00" not in text:
                return text
        except UnicodeDecodeError:
            continue
    raise InputError("The file is not UTF-8 text (is it a spreadsheet or a binary file?). "
                     "Save it as CSV (UTF-8) or JSONL.")


def _pick(columns: list[str], wanted: str | None, guesses: tuple[str, ...], what: str) -> str:
    if wanted:
        if wanted not in columns:
            raise InputError(f"The file has no column '{wanted}' for the {what}. Its columns are: "
                             f"{', '.join(columns) or '(none)'}.")
        return wanted
    lower = {c.lower().strip(): c for c in columns}
    for g in guesses:
        if g in lower:
            return lower[g]
    raise InputError(f"No {what} column found: the file needs a column named "
                     f"'{guesses[0]}' (or {', '.join(repr(g) for g in guesses[1:4])}), or name the "
                     f"column in the box. Its columns are: {', '.join(columns) or '(none)'}.")


DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def sniff_delimiter(text: str, default: str) -> str:
    """The delimiter of a CSV / TSV among , ; and tab (a spreadsheet in a European locale saves
    .csv with semicolons, which a comma reader takes as one column). csv.Sniffer decides from the
    first lines; its pick must give the header at least two columns and no fewer than the default
    does, else the default stands (a comma file whose texts hold semicolons stays a comma file)."""
    sample = "\n".join(text.splitlines()[:50])

    def width(d: str) -> int:
        try:
            return len(next(csv.reader(io.StringIO(sample), delimiter=d), []))
        except csv.Error:
            return 0

    try:
        found = csv.Sniffer().sniff(sample, delimiters=",;\t").delimiter
    except csv.Error:
        found = None
    if found and found != default and width(found) >= 2 and width(found) >= width(default):
        return found
    if width(default) >= 2:
        return default
    best = max(DELIMITER_NAMES, key=width)
    return best if width(best) >= 2 else default


def _rows_csv(text: str, delimiter: str) -> tuple[list[str], list[dict]]:
    try:
        reader = csv.DictReader(io.StringIO(text), delimiter=delimiter, strict=True)
        columns = [c for c in (reader.fieldnames or []) if c is not None]
        rows = []
        for row in reader:
            if None in row:  # more cells than the header has columns
                raise InputError(f"Line {reader.line_num} of the CSV has more cells than the header "
                                 f"({len(columns)} columns). Quote texts that contain a '{delimiter}'.")
            rows.append(row)
            if len(rows) > MAX_ROWS:
                break
    except csv.Error as exc:
        raise InputError(f"The CSV file is malformed ({exc}). Check its quotes, or save it again "
                         "as CSV (UTF-8).") from None
    return columns, rows


def _rows_jsonl(text: str) -> tuple[list[str], list[dict]]:
    rows, columns = [], {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json_input.loads(line, f"Line {n} of the JSONL file")
        except json.JSONDecodeError as exc:
            raise InputError(f"Line {n} of the JSONL file is not valid JSON ({exc.msg}). Each line "
                             'must be one object like {"text": "...", "label": "..."}.') from None
        if not isinstance(obj, dict):
            raise InputError(f"Line {n} of the JSONL file is not an object. Each line must be one "
                             'object like {"text": "...", "label": "..."}.')
        columns.update(dict.fromkeys(obj))
        rows.append(obj)
        if len(rows) > MAX_ROWS:
            break
    return list(columns), rows


def _stratified_split(rows: list[tuple[str, str]], labels: list[str], seed: int):
    """70/15/15 per label, seeded: validation and test get at least one example each."""
    out = {s: [] for s in SPLITS}
    for label in labels:
        items = [r for r in rows if r[1] == label]
        random.Random(f"{seed}-{label}").shuffle(items)
        n_eval = max(1, round(len(items) * EVAL_SHARE))
        out["validation"] += items[:n_eval]
        out["test"] += items[n_eval:2 * n_eval]
        out["train"] += items[2 * n_eval:]
    for s in SPLITS:
        random.Random(f"{seed}-{s}").shuffle(out[s])
    return out


def read_upload(path: str | None, text_column: str | None = None, label_column: str | None = None,
                seed: int = 0) -> Dataset:
    """A CSV / TSV / JSONL file -> Dataset. A `split` column (train/validation/test) is used as
    is; without one the rows are split 70/15/15 per label with a fixed seed."""
    if not path:
        raise InputError("No file uploaded: choose a .csv or .jsonl file with a text and a label "
                         "column, or pick a shipped dataset.")
    p = Path(path)
    ext = p.suffix.lower().lstrip(".")
    if ext not in ("csv", "tsv", "jsonl", "json"):
        raise InputError(f"'.{ext}' files are not read here: upload a .csv, .tsv or .jsonl file "
                         "with a text and a label column.")
    size = p.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise InputError(f"The file is {size / 1e6:.1f} MB; at most {MAX_UPLOAD_BYTES // (1024 * 1024)} MB "
                         f"(about {MAX_ROWS:,} rows) can be trained on here. Upload a sample.")
    text = _decode(p.read_bytes())
    if not text.strip():
        raise InputError("The file is empty: it needs a header (CSV) or JSON objects, one per line.")
    delimiter = None if ext in ("jsonl", "json") else sniff_delimiter(text, "\t" if ext == "tsv" else ",")
    columns, raw = _rows_jsonl(text) if delimiter is None else _rows_csv(text, delimiter)
    if len(raw) > MAX_ROWS:
        raise InputError(f"The file has more than {MAX_ROWS:,} rows; train on a sample of at most {MAX_ROWS:,}.")
    tcol = _pick(columns, (text_column or "").strip() or None, TEXT_GUESSES, "text")
    lcol = _pick(columns, (label_column or "").strip() or None, LABEL_GUESSES, "label")
    if tcol == lcol:
        raise InputError(f"The text and the label are both the column '{tcol}': choose two different columns.")
    scol = next((c for c in columns if c.lower().strip() == "split"), None)
    notices, rows, splits, clipped, skipped = [], [], [], 0, 0
    if delimiter is not None:
        notices.append(f"Columns read as separated by {DELIMITER_NAMES[delimiter]} (detected from the file).")
    for obj in raw:
        t, l = obj.get(tcol), obj.get(lcol)
        t = "" if t is None else str(t).strip()
        l = "" if l is None or isinstance(l, (dict, list)) else str(l).strip()
        if not t or not l:
            skipped += 1
            continue
        if len(t) > MAX_TEXT_CHARS:
            t, clipped = t[:MAX_TEXT_CHARS], clipped + 1
        if len(l) > MAX_LABEL_CHARS:
            raise InputError(f"A label is {len(l)} characters long ({l[:40]!r}...): is '{lcol}' really "
                             "the label column? Labels are short names like 'positive'.")
        rows.append((t, l))
        splits.append(str(obj.get(scol, "")).strip().lower() if scol else "")
    if skipped:
        notices.append(f"{skipped} row(s) with an empty text or label were skipped.")
    if clipped:
        notices.append(f"{clipped} text(s) longer than {MAX_TEXT_CHARS:,} characters were cut.")
    counts = Counter(l for _, l in rows)
    if not counts:
        raise InputError(f"No rows with both a text ('{tcol}') and a label ('{lcol}') were found.")
    if len(counts) < 2:
        raise InputError(f"Every row has the label '{next(iter(counts))}': a classifier needs at "
                         "least two labels. Add examples of another label.")
    if len(counts) > MAX_LABELS:
        raise InputError(f"The file has {len(counts)} different labels; at most {MAX_LABELS} are "
                         f"allowed. Is '{lcol}' really the label column?")
    few = sorted(l for l, n in counts.items() if n < MIN_PER_LABEL)
    if few:
        raise InputError("Too few examples for " + ", ".join(f"'{l}' ({counts[l]})" for l in few) +
                         f": each label needs at least {MIN_PER_LABEL} (some to train on, one to "
                         "validate, one to test). Add examples or drop those labels.")
    labels = sorted(counts)
    if scol and all(s in SPLITS for s in splits):
        by = {s: [r for r, sp in zip(rows, splits) if sp == s] for s in SPLITS}
        missing = [s for s in SPLITS if not by[s]]
        if missing:
            raise InputError(f"The 'split' column has no {' or '.join(missing)} rows: give every "
                             "split some rows, or drop the column to split automatically.")
        notices.append("Splits taken from the file's 'split' column.")
    else:
        if scol:
            notices.append("The 'split' column holds values other than train/validation/test; "
                           "the rows were split 70/15/15 per label instead.")
        by = _stratified_split(rows, labels, seed)
    name = p.name[:60]
    return Dataset(name, labels, *(_indexed(by[s], labels) for s in SPLITS), source="upload", notices=notices)


def subsample(rows: list[tuple[str, int]], per_label: int | None, seed: int = 0) -> list[tuple[str, int]]:
    """At most `per_label` examples of each label, chosen with a fixed seed (None = all)."""
    if per_label is None:
        return list(rows)
    rng = random.Random(seed)
    by: dict[int, list[int]] = {}
    for i, (_, y) in enumerate(rows):
        by.setdefault(y, []).append(i)
    keep = []
    for y, idx in sorted(by.items()):
        keep += idx if len(idx) <= per_label else rng.sample(idx, per_label)
    return [rows[i] for i in sorted(keep)]


def cap_examples(rows: list[tuple[str, int]], max_examples: int, seed: int = 0) -> list[tuple[str, int]]:
    """At most `max_examples` rows overall, spread evenly over the labels."""
    if len(rows) <= max_examples:
        return list(rows)
    n_labels = len({y for _, y in rows})
    per = max(1, max_examples // max(1, n_labels))
    out = subsample(rows, per, seed)
    return out[:max_examples]
