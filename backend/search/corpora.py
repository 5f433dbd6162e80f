"""Corpora for semantic search: parsing uploads, chunking, limits, content hashes.

A corpus is a list of passages (title + text). Uploads come as `.txt` (one document per
line, or blank-line separated), `.csv` / `.tsv` (a text column and an optional title column),
`.jsonl` (a text field and an optional title field) or pasted text. Long documents are split
into overlapping word windows so that each passage fits the embedder's context.
Every bad input raises `InputError` with what is wrong and what to do.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field

from backend.runtime import json_input
from backend.runtime.config import (DEFAULT_CHUNK_WORDS, DEFAULT_OVERLAP_WORDS, GLOSSARY_FILE, PASTE_NAME,
                                    SearchLimits)
from backend.runtime.errors import InputError
from backend.runtime.uploads import discard_upload, upload_dir  # noqa: F401  (re-exported)
from backend.runtime.validation import clean_text

ASSETS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "assets")
GLOSSARY_PATH = os.path.join(os.path.dirname(ASSETS_DIR), GLOSSARY_FILE)

SUPPORTED_EXTENSIONS = (".txt", ".csv", ".tsv", ".jsonl")


@dataclass
class Passage:
    title: str
    text: str


@dataclass
class Corpus:
    """Passages plus what parsing noticed (dropped duplicates, skipped lines...)."""

    name: str
    passages: list[Passage]
    notes: list[str] = field(default_factory=list)
    n_documents: int = 0

    def __len__(self) -> int:
        return len(self.passages)

    @property
    def content_hash(self) -> str:
        return content_hash(self.passages)

    def texts_for_embedding(self) -> list[str]:
        """Title and text together: the title is often the best summary of a passage."""
        return [f"{p.title}: {p.text}" if p.title else p.text for p in self.passages]


def content_hash(passages: list[Passage]) -> str:
    h = hashlib.sha256()
    for p in passages:
        h.update(p.title.encode("utf-8"))
        h.update(b"\x1f")
        h.update(p.text.encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()[:20]


# --------------------------------------------------------------------------- chunking
def chunk_text(text: str, max_words: int = DEFAULT_CHUNK_WORDS,
               overlap: int = DEFAULT_OVERLAP_WORDS) -> list[str]:
    """Split into windows of `max_words` words; consecutive windows share `overlap` words."""
    if max_words < 1:
        raise InputError("Passage length must be at least 1 word.")
    if not 0 <= overlap < max_words:
        raise InputError(f"Overlap must be between 0 and {max_words - 1} words "
                         f"(less than the passage length).")
    words = text.split()
    if len(words) <= max_words:
        return [" ".join(words)] if words else []
    step = max_words - overlap
    chunks = []
    for start in range(0, len(words), step):
        chunks.append(" ".join(words[start:start + max_words]))
        if start + max_words >= len(words):
            break
    return chunks


def documents_to_corpus(name: str, docs: list[tuple[str, str]], *, max_words: int = DEFAULT_CHUNK_WORDS,
                        overlap: int = DEFAULT_OVERLAP_WORDS, limits: SearchLimits | None = None,
                        notes: list[str] | None = None) -> Corpus:
    """(title, text) documents -> deduplicated, chunked, size-checked corpus."""
    limits = limits or SearchLimits()
    notes = list(notes or [])
    # JSON escapes can carry lone surrogates ("\ud800"): U+FFFD, so hashing and tokenizers accept them
    docs = [(clean_text(t).strip(), " ".join(clean_text(x).split())) for t, x in docs]
    docs = [(t, x) for t, x in docs if x]
    if not docs:
        raise InputError("The corpus is empty: no text was found. Upload a file with text in it "
                         "or paste some documents (one per line, or separated by blank lines).")
    seen: set[str] = set()
    unique = []
    for t, x in docs:
        key = x.lower()
        if key in seen:
            continue
        seen.add(key)
        unique.append((t, x))
    if len(unique) < len(docs):
        notes.append(f"Dropped {len(docs) - len(unique)} duplicate document(s); "
                     f"{len(unique)} unique remain.")
    passages: list[Passage] = []
    for i, (t, x) in enumerate(unique):
        title = t or f"doc {i + 1}"
        chunks = chunk_text(x, max_words, overlap)
        if len(chunks) == 1:
            passages.append(Passage(title, chunks[0]))
        else:
            for j, c in enumerate(chunks):
                passages.append(Passage(f"{title} (part {j + 1}/{len(chunks)})", c))
        if len(passages) > limits.max_passages:
            raise InputError(f"The corpus has more than {limits.max_passages:,} passages, the "
                             f"limit of this app. Upload fewer or shorter documents.")
    if len(passages) > len(unique):
        notes.append(f"Split long documents into {len(passages)} passages of up to {max_words} "
                     f"words with {overlap} words of overlap.")
    if len(passages) < 2:
        raise InputError("The corpus has only one passage: search needs at least two to rank. "
                         "Add more documents (one per line, or separated by blank lines), or "
                         "split your document into paragraphs.")
    return Corpus(name=name, passages=passages, notes=notes, n_documents=len(unique))


# --------------------------------------------------------------------------- decoding
def decode_bytes(data: bytes, filename: str = "the file") -> str:
    """Bytes -> str, refusing binary files and non-UTF-8 text with a clear message."""
    if not data:
        raise InputError(f"{filename} is empty. Upload a file with text in it.")
    head = data[:8192]
    if b"\x00" in head:
        raise InputError(f"{filename} looks like a binary file (it contains NUL bytes). "
                         f"Upload plain text: .txt, .csv, .tsv or .jsonl.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{filename} is not valid UTF-8 (bad byte at position {e.start}). "
                         f"Save it as UTF-8 (e.g. 'Save as... > Encoding: UTF-8') and upload "
                         f"it again.") from None
    ctrl = sum(1 for ch in text[:8192] if ord(ch) < 32 and ch not in "\t\n\r\f")
    if ctrl > max(8, len(text[:8192]) // 20):
        raise InputError(f"{filename} looks like a binary file (many control characters). "
                         f"Upload plain text: .txt, .csv, .tsv or .jsonl.")
    return text


def check_size(nbytes: int, limits: SearchLimits, what: str = "The corpus") -> None:
    if nbytes > limits.max_bytes:
        raise InputError(f"{what} is {nbytes / 1e6:.1f} MB, over the limit of "
                         f"{limits.max_bytes / 1e6:.0f} MB. Upload a smaller file or split it.")


# --------------------------------------------------------------------------- formats
def parse_txt(text: str) -> list[tuple[str, str]]:
    """Blank-line separated paragraphs if there are blank lines, else one document per line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if re.search(r"\n[ \t]*\n", text.strip()):
        parts = re.split(r"\n[ \t]*\n", text)
    else:
        parts = text.split("\n")
    return [("", p) for p in parts if p.strip()]


def _read_table(text: str, delimiter: str) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    try:
        rows = list(reader)
    except csv.Error as e:
        raise InputError(f"The table could not be read ({e}). Check the delimiter and "
                         f"quoting.") from None
    columns = [c for c in (reader.fieldnames or []) if c is not None]
    return columns, rows


def table_columns(text: str, delimiter: str) -> list[str]:
    return _read_table(text, delimiter)[0]


def parse_table(text: str, delimiter: str, text_column: str | None,
                title_column: str | None = None) -> list[tuple[str, str]]:
    columns, rows = _read_table(text, delimiter)
    if not columns:
        raise InputError("The table has no header row. Put column names on the first line.")
    if not text_column:
        if len(columns) == 1:
            text_column = columns[0]
        else:
            raise InputError(f"Choose the text column. The table's columns are: "
                             f"{', '.join(columns)}.")
    if text_column not in columns:
        raise InputError(f"The table has no column '{text_column}'. Its columns are: "
                         f"{', '.join(columns)}. Choose one of them as the text column.")
    if title_column and title_column not in columns:
        raise InputError(f"The table has no column '{title_column}' (chosen as the title "
                         f"column). Its columns are: {', '.join(columns)}.")
    return [((r.get(title_column) or "") if title_column else "", r.get(text_column) or "")
            for r in rows]


def jsonl_fields(text: str) -> list[str]:
    """Field names seen in the first good lines (for the field dropdown)."""
    names: list[str] = []
    for line in text.splitlines()[:200]:
        try:
            obj = json_input.loads(line, "a JSONL line")
        except ValueError:  # an InputError is a ValueError too: a bad line only adds no field
            continue
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, str) and k not in names:
                    names.append(k)
    return names


def parse_jsonl(text: str, field: str | None, title_field: str | None = None,
                keep_good_lines: bool = False) -> tuple[list[tuple[str, str]], list[str]]:
    """-> (documents, notes). Broken lines are refused (listed) unless keep_good_lines."""
    docs, bad, missing = [], [], []
    fields = jsonl_fields(text)
    if not field:
        if "text" in fields:
            field = "text"
        elif len(fields) == 1:
            field = fields[0]
        else:
            raise InputError(f"Choose the JSONL field that holds the text. Fields seen: "
                             f"{', '.join(fields) or 'none'}.")
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json_input.loads(line, f"Line {n}")
        except ValueError:  # malformed or nested too deeply: counted as a bad line
            bad.append(n)
            continue
        if not isinstance(obj, dict):
            bad.append(n)
            continue
        value = obj.get(field)
        if not isinstance(value, str):
            missing.append(n)
            continue
        title = obj.get(title_field) if title_field else ""
        docs.append((str(title) if title is not None else "", value))
    notes = []
    if not docs and (bad or missing):
        raise InputError(f"No line of the JSONL file has a text field '{field}'"
                         f"{_lines(' (broken lines: ', bad, ')')}. Fields seen: "
                         f"{', '.join(fields) or 'none'}.")
    if bad and not keep_good_lines:
        raise InputError(f"{len(bad)} line(s) of the JSONL file are not valid JSON objects"
                         f"{_lines(': line ', bad, '')}. Fix them, or tick 'keep the good "
                         f"lines' to index the {len(docs)} good one(s) only.")
    if bad:
        notes.append(f"Skipped {len(bad)} broken line(s){_lines(': line ', bad, '')}.")
    if missing:
        notes.append(f"Skipped {len(missing)} line(s) without a text field '{field}'"
                     f"{_lines(': line ', missing, '')}.")
    return docs, notes


def _lines(prefix: str, nums: list[int], suffix: str, show: int = 20) -> str:
    if not nums:
        return ""
    s = ", ".join(str(n) for n in nums[:show])
    if len(nums) > show:
        s += f" and {len(nums) - show} more"
    return f"{prefix}{s}{suffix}"


@dataclass
class UploadOptions:
    text_field: str | None = None  # csv/tsv column or jsonl field
    title_field: str | None = None
    keep_good_lines: bool = False
    max_words: int = DEFAULT_CHUNK_WORDS
    overlap: int = DEFAULT_OVERLAP_WORDS


def corpus_from_bytes(data: bytes, filename: str, options: UploadOptions | None = None,
                      limits: SearchLimits | None = None) -> Corpus:
    """Parse an uploaded file by its extension."""
    options = options or UploadOptions()
    limits = limits or SearchLimits()
    base = os.path.basename(filename or "upload")
    ext = os.path.splitext(base)[1].lower()
    if ext not in SUPPORTED_EXTENSIONS:
        raise InputError(f"{base}: unsupported file type '{ext or '(none)'}'. Upload "
                         f"{', '.join(SUPPORTED_EXTENSIONS)}, or paste the text.")
    check_size(len(data), limits, base)
    text = decode_bytes(data, base)
    notes: list[str] = []
    if ext == ".txt":
        docs = parse_txt(text)
    elif ext in (".csv", ".tsv"):
        docs = parse_table(text, "," if ext == ".csv" else "\t", options.text_field,
                           options.title_field)
    else:
        docs, notes = parse_jsonl(text, options.text_field, options.title_field,
                                  options.keep_good_lines)
    return documents_to_corpus(base, docs, max_words=options.max_words,
                               overlap=options.overlap, limits=limits, notes=notes)


def read_upload(path: str, limits: SearchLimits | None = None) -> bytes:
    """An uploaded file's bytes; a file in the upload folder is deleted once read, good or bad."""
    limits = limits or SearchLimits()
    if not isinstance(path, str) or not path or "\x00" in path:
        raise InputError("file must be an uploaded file: in gradio_client, pass handle_file(path).")
    try:
        check_size(os.path.getsize(path), limits, os.path.basename(path))
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        raise InputError(f"The uploaded file could not be read: {os.path.basename(path)}. "
                         f"Upload it again.") from None
    finally:
        discard_upload(path)


def corpus_from_file(path: str, options: UploadOptions | None = None,
                     limits: SearchLimits | None = None) -> Corpus:
    return corpus_from_bytes(read_upload(path, limits), path, options, limits)


def corpus_from_paste(text: str, options: UploadOptions | None = None,
                      limits: SearchLimits | None = None) -> Corpus:
    options = options or UploadOptions()
    limits = limits or SearchLimits()
    text = clean_text(text or "")
    if not text.strip():
        raise InputError("The pasted text is empty. Paste documents, one per line or "
                         "separated by blank lines.")
    check_size(len(text.encode("utf-8")), limits, "The pasted text")
    return documents_to_corpus(PASTE_NAME, parse_txt(text), max_words=options.max_words,
                               overlap=options.overlap, limits=limits)


def load_glossary(path: str = GLOSSARY_PATH) -> Corpus:
    """The built-in glossary of the book's topics (assets/corpus/glossary.jsonl)."""
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                docs.append((obj["title"], obj["text"]))
    corpus = documents_to_corpus("glossary", docs, max_words=400, overlap=0)
    corpus.notes = []
    return corpus
