"""The question's topic words that the text never mentions: the second half of "no answer".

Span QA (span_qa) scores spans against the reply "not in the text", and that comparison misses
one kind of unanswerable question entirely: when the text holds a span of the asked-for *kind*
about something else ("How much will a ticket cost?" over a text that gives the cost of the
line, "Which company funded the research?" over a text that names the journal). The model
rates the sum of money or the organisation highly and answers. SQuAD 2.0 writes such questions
on purpose. What gives them away here is plain: the question's topic ("ticket", "funded") is a
word the text never uses, in any form.

So a question whose topic words are not all in the text gets "no answer", and the result says
which word was missing, so the learner sees the reason and can judge it. What does *not* count
as topic: function words, the words that name the answer's type ("Which **country**", "How
**tall**", "What **year**") and common verbs that questions use in place of the text's own
("Who **makes** the Aero?" over "announced by the company Northwind"). A word counts as present
in any inflected form: the two words have the same Snowball stem (NLTK's English stemmer:
stopped/stop, planned/plan, tried/try, lives/lived, funded/funding), or one is a listed irregular
form of the other (built/build, frozen/freeze). The stemmer keeps apart words that plain suffix
rules join (university/universe, policy/police, news/new).
The word lists were chosen on the TUNING and first two held-out sets and measured once on a third
written afterwards by someone who had not seen the rule (bench/qa.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

# Function words and question words: never topic.
STOP = frozenset("""a an the of in on at to for from by with about into over after before during is are was were be
been being do does did has have had will would can could should may might must shall what which who whom whose when
where why how many much long far this that these those it its their there his her he she they them as and or but not
no than then so such very most more first last one ones per ever total""".split())
# Words that name the kind of answer asked for ("Which country", "How tall", "What year").
ANSWER_TYPE = frozenset("""country city town place company team year date day time name number amount price percent
high tall deep wide long far old big large small heavy age kind type institution organisation organization firm
group person""".split())
# Common verbs a question uses in place of the text's own ("makes" for "announced by").
LIGHT_VERBS = frozenset("""be do go get make take give come see know say tell put set keep let begin start end open
close meet live stay become play pay travel fall rise win lose own build use hold carry run move turn show call find
leave bring happen lead work hope want need try ask help cost score sell buy send""".split())
IRREGULAR = {
    "frozen": "freeze", "froze": "freeze", "built": "build", "sank": "sink", "sunk": "sink", "won": "win",
    "went": "go", "gone": "go", "made": "make", "paid": "pay", "gave": "give", "given": "give", "fell": "fall",
    "fallen": "fall", "took": "take", "taken": "take", "led": "lead", "ran": "run", "grew": "grow", "grown": "grow",
    "rose": "rise", "risen": "rise", "met": "meet", "held": "hold", "kept": "keep", "left": "leave",
    "brought": "bring", "sold": "sell", "bought": "buy", "sent": "send", "told": "tell", "said": "say",
    "began": "begin", "begun": "begin", "became": "become", "born": "bear", "wrote": "write", "written": "write",
    "drove": "drive", "chose": "choose", "spent": "spend", "found": "find", "thought": "think", "caught": "catch",
    "taught": "teach", "flew": "fly", "flown": "fly", "mice": "mouse", "children": "child", "men": "man",
    "women": "woman", "teeth": "tooth", "feet": "foot", "geese": "goose",
}


@lru_cache(maxsize=1)
def _stemmer():
    """NLTK's English Snowball stemmer (pure Python, no data download), imported on first use: `import
    nltk` pulls in scipy.stats: 2-3.5 s of every app start otherwise (measured here), for a tab that may never ask."""
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower())


# What may follow a stem for a form to count as an inflection of it (stop|s, tri|ed, plan|ned, freez|es).
INFLECTIONS = frozenset(("", "s", "es", "ed", "d", "ing", "e", "y", "ies", "ied", "'s"))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word's Snowball stem where the stemmer only took an inflection off (tried -> tri,
    stopped -> stop); the word itself where it took a derivation (university, not 'univers',
    which universe also stems to)."""
    root = _stemmer().stem(word)
    common = 0
    while common < min(len(root), len(word)) and root[common] == word[common]:
        common += 1
    tail = word[common:]
    if root[common:] in ("", "i", "e") and (tail in INFLECTIONS or (tail[:1] == root[-1:] and tail[1:] in INFLECTIONS)):
        return root
    return word


def forms(word: str) -> set[str]:
    """The stems `word` matches by: its own, and its base's where it is an irregular form (built -> build)."""
    word = re.sub(r"'s$", "", word)
    return {stem(word), stem(IRREGULAR.get(word, word))}


@lru_cache(maxsize=1)
def _type_stems() -> frozenset:
    return frozenset(stem(w) for w in ANSWER_TYPE | LIGHT_VERBS)


def topic_terms(question: str) -> list[str]:
    """The question's words that name what it is about (in order, once each)."""
    out = []
    for w in words(question):
        if w in STOP or w.isdigit() or forms(w) & _type_stems() or w in out:
            continue
        out.append(w)
    return out


def absent_terms(question: str, text: str) -> list[str]:
    """The question's topic words that `text` never uses, in any form (empty: all are there)."""
    text_stems = set()
    for t in set(words(text)):
        text_stems |= forms(t)
    return [w for w in topic_terms(question) if not forms(w) & text_stems]
