"""The tiny encoder-decoder's toy translation: dates written in English words -> ISO digits.

"the twenty-third of march , two thousand and four" -> "2004-03-23". The task is chosen so
that cross-attention has something to show: the output puts the **year first**, though the
input says it last (reordering: an off-diagonal block in the alignment heatmap), each pair of
digits comes from one or two words ("twenty" + "third" -> "2", "3"), and month names map to
two digits that never appear as such in the input.

Dates run from 1950-01-01 to 2049-12-31 (36,525 of them). One seeded shuffle deals distinct
**dates** to the test, validation and train splits, so no held-out date (and no held-out input)
is ever seen in training; each date gets one wording, drawn from a seeded generator: three
orders (day-of-month-year, the day of month, year; month day year) and the ways a year is said
("nineteen oh five", "nineteen hundred", "two thousand and seven", "twenty twenty-one").

`python -m backend.engines.scratch.seq2seq_data` writes the shipped files in
assets/data/toy_translation/; a unit test checks they equal what this module generates.
"""

from __future__ import annotations

import datetime
import json
import os
import random
from functools import lru_cache

from backend.engines.scratch.corpora import ASSETS  # the repository's assets/, found once

DATA_DIR = os.path.join(ASSETS, "data", "toy_translation")
SEED = 26
FIRST, LAST = datetime.date(1950, 1, 1), datetime.date(2049, 12, 31)
SIZES = {"test": 500, "validation": 300, "train": 8000}
SPLITS = ("train", "validation", "test")

ONES = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
ORDINAL_ONES = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                "eighteenth", "nineteenth"]
ORDINAL_TENS = {20: "twentieth", 30: "thirtieth"}
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]


def cardinal(n: int) -> str:
    """1..99 in words: 'seven', 'forty-two'."""
    if n < 20:
        return ONES[n]
    tens, ones = divmod(n, 10)
    return TENS[tens] + (f"-{ONES[ones]}" if ones else "")


def ordinal(n: int) -> str:
    """1..31 as an ordinal: 'first', 'twenty-third', 'thirtieth'."""
    if n < 20:
        return ORDINAL_ONES[n]
    if n in ORDINAL_TENS:
        return ORDINAL_TENS[n]
    return f"{TENS[n // 10]}-{ORDINAL_ONES[n % 10]}"


def year_words(y: int, rng: random.Random) -> str:
    """A year as people say it (one way drawn from `rng` where there are several)."""
    hi, lo = divmod(y, 100)
    if hi == 19:
        if lo == 0:
            return "nineteen hundred"
        return "nineteen " + (f"oh {ONES[lo]}" if lo < 10 else cardinal(lo))
    if lo == 0:
        return "two thousand"
    if lo < 10:
        return rng.choice([f"two thousand and {ONES[lo]}", f"two thousand {ONES[lo]}"])
    return rng.choice([f"twenty {cardinal(lo)}", f"two thousand and {cardinal(lo)}"])


def words(d: datetime.date, rng: random.Random) -> str:
    day, month, year = ordinal(d.day), MONTHS[d.month - 1], year_words(d.year, rng)
    order = rng.randrange(3)
    if order == 0:
        return f"{day} of {month} {year}"
    if order == 1:
        return f"the {day} of {month} , {year}"
    return f"{month} {day} {year}"


def _all_dates() -> list[datetime.date]:
    return [FIRST + datetime.timedelta(days=i) for i in range((LAST - FIRST).days + 1)]


@lru_cache(maxsize=None)
def generate() -> dict[str, list[dict]]:
    """The three splits, deterministic: {"train": [{"source", "target"}, ...], ...}."""
    dates = _all_dates()
    random.Random(SEED).shuffle(dates)
    rng = random.Random(SEED + 1)
    out, at = {}, 0
    for split in ("test", "validation", "train"):  # the held-out splits first: their size never changes
        chosen = dates[at: at + SIZES[split]]
        at += SIZES[split]
        out[split] = [{"source": words(d, rng), "target": d.isoformat()} for d in chosen]
    return out


def _path(split: str) -> str:
    return os.path.join(DATA_DIR, f"{split}.jsonl")


@lru_cache(maxsize=None)
def load(split: str) -> tuple[tuple[str, str], ...]:
    """One shipped split as (source, target) pairs."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}")
    with open(_path(split), encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return tuple((r["source"], r["target"]) for r in rows)


def write() -> None:
    os.makedirs(DATA_DIR, exist_ok=True)
    for split, rows in generate().items():
        with open(_path(split), "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    write()
    print({k: len(v) for k, v in generate().items()}, "->", DATA_DIR)
