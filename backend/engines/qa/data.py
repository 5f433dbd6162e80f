"""The QA sets the project ships: SQuAD 2.0 style records, read and checked.

assets/data/qa: the general set the reader is trained on; assets/data/glossary_qa: questions over the
glossary corpus's passages (the target domain the reader is adapted to), split by passage.
Each line: {"id", "genre" or "title", "context", "question", "answers": {"text": [...], "answer_start": [...]}};
an empty `text` list is an unanswerable question. Every answer is context[start:start + len(text)].
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[3] / "assets" / "data" / "qa"
SPLITS = ("train", "validation")
GLOSSARY_DIR = DATA_DIR.parent / "glossary_qa"
GLOSSARY_SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Example:
    id: str
    context: str
    question: str
    answers: tuple[str, ...]  # empty: unanswerable
    starts: tuple[int, ...]
    genre: str = ""
    title: str = ""  # the passage's title, where the context is a corpus passage

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def parse(record: dict) -> Example:
    ans = record["answers"]
    texts, starts = tuple(ans["text"]), tuple(int(s) for s in ans["answer_start"])
    ctx = record["context"]
    if len(texts) != len(starts):
        raise ValueError(f"{record.get('id')}: {len(texts)} answers but {len(starts)} offsets")
    for t, s in zip(texts, starts):
        if not t or ctx[s:s + len(t)] != t:
            raise ValueError(f"{record.get('id')}: answer {t!r} is not context[{s}:{s + len(t)}]")
    return Example(str(record.get("id", "")), ctx, record["question"], texts, starts, record.get("genre", ""),
                   record.get("title", ""))


def load(split: str, directory: Path | None = None) -> list[Example]:
    path = (directory or DATA_DIR) / f"{split}.jsonl"
    with open(path, encoding="utf-8") as f:
        return [parse(json.loads(line)) for line in f if line.strip()]
