"""Chapter 6's warning made visible: the numbers, names and content words of a summary that its
source does not contain (and of Ask the corpus's generated answer that its retrieved passages do not).

An abstractive model writes new text token by token; nothing ties a token to the source, so a
fluent summary can carry a number, a name or a claim the text never made. This check reads the
summary against the source, never the model:

- numbers: digits in any grouping ("3,000", "3000", "1.5 million", "30%") and simple number
  words ("three thousand", "twenty-five"), compared by value, so "about 3,000" in the source
  supports "three thousand" in the summary. "one" alone is not read as a number (it is too
  often a pronoun);
- names: the entities the project's NER model finds in the summary (handed in by the caller),
  plus runs of capitalised words as a fallback; a name is supported when the source contains it
  (case and spacing aside) or every word of it;
- content words: every other word outside a closed list of function words, stemmed with NLTK's
  Snowball stemmer ("closed" supports "closing"), against the stems of the source's words.

Plain data out: each unsupported item with its exact character offsets in the summary
(`summary[start:end] == text`), its kind and why; counts per kind; how many items were checked.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

KINDS = ("number", "name", "word")

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
           "trillion": 1_000_000_000_000}
_NUMBER_WORDS = set(_UNITS) | set(_TENS) | set(_SCALES)
_DIGITS = re.compile(
    r"(?<![\w.,])(?<![A-Za-z]-)"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<pct>%|percent\b|per cent\b)|(?:\s+|-)(?P<scale>hundred|thousand|million|billion|trillion)\b)?",
    re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_NUMBER_RUN = re.compile(
    r"\b(?:" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
    r"(?:(?:\s+and\s+|\s+|-)(?:" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r"))*\b",
    re.IGNORECASE)
_CAPITALISED = re.compile(r"[A-ZÀ-ÖØ-Þ][^\W_]*(?:['’][^\W\d_]+)?")
_SENTENCE_END = re.compile(r"[.!?…:;]['\"”’)\]]*\s*$")

# Function words (closed classes): pronouns, determiners, prepositions, conjunctions, auxiliaries.
# Not content, so never flagged; everything else is.
FUNCTION_WORDS = frozenset("""
a an the this that these those there here it its it's itself they them their theirs themselves he him his
himself she her hers herself we us our ours ourselves you your yours yourself yourselves i me my mine myself
who whom whose which what whatever whoever when where why how whether if then than so as because since while
although though unless until till whereas and or nor but yet also too either neither not no none only just
of in on at by for with without within into onto from to toward towards up down over under above below
between among amongst through throughout during before after about against around across along beyond
behind beside besides near off out upon via per despite except like unlike inside outside
be is am are was were been being do does did done doing have has had having will would shall should can
could may might must ought s t d ll re ve m o y
all any both each every few many more most much other others some such own same several another whole
very quite rather really almost nearly about approximately around roughly least less still even ever never
again already now once twice therefore thus however hence meanwhile instead otherwise
""".split())


def _norm(text: str) -> str:
    """NFKC with straight apostrophes; the same length-preserving mapping for both texts is not
    needed: offsets are always taken from the summary as given."""
    return unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'")


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.snowball import SnowballStemmer  # a maintained stemmer, no data download

    return SnowballStemmer("english")


def stem(word: str) -> str:
    w = _norm(word).lower()
    w = re.sub(r"'s$", "", w)
    return _stemmer().stem(w)


# ------------------------------------------------------------------------------ numbers

def _words_value(words: list[str]) -> float | None:
    """'three thousand two hundred' -> 3200; None when the words do not make one number."""
    total, current, seen = 0, 0, False
    for w in words:
        if w == "and":
            continue
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current = 0
        else:
            return None
        seen = True
    return float(total + current) if seen else None


def numbers(text: str) -> list[dict]:
    """Every number in `text`: {text, start, end, value}, offsets into `text` as given."""
    found, taken = [], []
    for m in _DIGITS.finditer(text):
        value = float(m.group("num").replace(",", ""))
        if m.group("scale"):
            value *= _SCALES[m.group("scale").lower()]
        found.append({"text": m.group(0), "start": m.start(), "end": m.end(), "value": value})
        taken.append((m.start(), m.end()))
    for m in _NUMBER_RUN.finditer(text):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        words = [w for w in re.split(r"[\s-]+", m.group(0).lower()) if w]
        while words and words[-1] == "and":
            words.pop()
        if words == ["one"] or not words:
            continue  # "one of the fishermen": a pronoun far more often than a count
        value = _words_value(words)
        if value is not None:
            found.append({"text": m.group(0), "start": m.start(), "end": m.end(), "value": value})
    return sorted(found, key=lambda n: n["start"])


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# -------------------------------------------------------------------------------- names

def _name_words(text: str) -> list[str]:
    return [re.sub(r"'s$", "", w.lower()) for w in _WORD.findall(_norm(text))]


def capitalised_spans(text: str) -> list[dict]:
    """Runs of capitalised words, leading function words dropped ('The Rhone' -> 'Rhone'); the word
    that starts a sentence is left out (capitalised for the sentence, not as a name)."""
    spans, run = [], []

    def close():
        while run and run[0].group(0).lower() in FUNCTION_WORDS:
            run.pop(0)
        before = text[:run[0].start()].rstrip() if run else ""
        if run and (not before or before[-1] in ".!?\"“(\n"):
            run.pop(0)  # capitalised for the sentence: left to the content-word check
        if run:
            start, end = run[0].start(), run[-1].end()
            spans.append({"text": text[start:end], "start": start, "end": end})
        run.clear()

    for m in _WORD.finditer(text):
        gap = text[run[-1].end():m.start()] if run else ""
        if run and not re.fullmatch(r"[ \t]+|[ \t]*-[ \t]*", gap):
            close()
        if _CAPITALISED.fullmatch(m.group(0)):
            run.append(m)
        else:
            close()
    close()
    return spans


# -------------------------------------------------------------------------------- check

def _overlaps(start: int, end: int, spans) -> bool:
    return any(s < end and start < e for s, e in spans)


def check_support(summary: str, source: str, entities: list[dict] | None = None) -> dict:
    """What `summary` says that `source` does not contain.

    `entities`: the NER model's entities in the summary ({start, end, entity_group}; None: no NER
    model, names come from capitalised spans only). Returns {"unsupported": [{text, start, end,
    kind, reason, found_by}], "counts": {number, name, word, total}, "checked": {number, name,
    word}, "names_from"}."""
    summary, source = summary or "", source or ""
    items, checked, covered = [], dict.fromkeys(KINDS, 0), []
    source_values = [n["value"] for n in numbers(_norm(source))]
    for n in numbers(summary):
        checked["number"] += 1
        covered.append((n["start"], n["end"]))
        if not any(_same(n["value"], v) for v in source_values):
            items.append(_item(summary, n["start"], n["end"], "number", "numbers",
                               f"the source has no number equal to {n['value']:g}, in digits or in words"))
    source_flat = " ".join(_name_words(source))
    source_words = set(source_flat.split())
    names = [dict(e, found_by="ner") for e in (entities or [])
             if isinstance(e.get("start"), int) and isinstance(e.get("end"), int) and e["end"] > e["start"]]
    ner_spans = [(e["start"], e["end"]) for e in names]
    names += [dict(c, found_by="capitalised") for c in capitalised_spans(summary)
              if not _overlaps(c["start"], c["end"], ner_spans)]
    for e in sorted(names, key=lambda e: e["start"]):
        start, end = _trim(summary, e["start"], e["end"])
        if end <= start or _overlaps(start, end, covered):
            continue
        covered.append((start, end))
        words = _name_words(summary[start:end])
        if not words:
            continue
        checked["name"] += 1
        joined = " ".join(words)
        if f" {joined} " in f" {source_flat} " or all(w in source_words for w in words):
            continue
        missing = [w for w in words if w not in source_words]
        items.append(_item(summary, start, end, "name", e["found_by"],
                           f"the source never names {summary[start:end]!r}"
                           + (f" (no {', '.join(repr(w) for w in missing)})" if missing else "")))
    source_stems = {stem(w) for w in _WORD.findall(_norm(source))}
    for m in _WORD.finditer(summary):
        if _overlaps(m.start(), m.end(), covered):
            continue
        low = _norm(m.group(0)).lower()
        if len(low) < 2 or low in FUNCTION_WORDS or low in _NUMBER_WORDS or re.sub(r"'s$", "", low) in FUNCTION_WORDS:
            continue
        checked["word"] += 1
        if stem(low) not in source_stems:
            items.append(_item(summary, m.start(), m.end(), "word", "stems",
                               f"no word in the source shares the stem '{stem(low)}'"))
    items.sort(key=lambda i: i["start"])
    counts = {k: sum(1 for i in items if i["kind"] == k) for k in KINDS}
    counts["total"] = len(items)
    return {"unsupported": items, "counts": counts, "checked": checked,
            "names_from": "the NER model's entities and capitalised spans" if entities is not None
            else "capitalised spans (no NER model ran)"}


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """An entity's span without surrounding spaces or punctuation, inside the text."""
    start, end = max(0, start), min(len(text), end)
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return start, end


def _item(summary: str, start: int, end: int, kind: str, found_by: str, reason: str) -> dict:
    return {"text": summary[start:end], "start": start, "end": end, "kind": kind, "found_by": found_by,
            "reason": reason}


def cut_at_limit(summary: str, finish_reason: str | None, new_tokens: int | None, max_new_tokens: int | None) -> bool:
    """True when generation stopped at its token limit inside a sentence (the text ends without
    a sentence's closing punctuation)."""
    at_limit = finish_reason == "length" or (  # a seq2seq model's count may leave out one start token
        bool(max_new_tokens) and new_tokens is not None and new_tokens >= int(max_new_tokens) - 1)
    return bool(at_limit and (summary or "").strip() and not _SENTENCE_END.search(summary))
