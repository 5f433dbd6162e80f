"""The Search tab's contracts (backend/runtime/contract.py). An index build embeds its passages in chunks that
check the budget (stoppable); a pasted or uploaded corpus is counted at the door against the public passage
cap, before its body waits in a lane."""

from __future__ import annotations

import os

from backend.runtime import speeds
from backend.runtime.contract import SMALL, Choice, Contract, Cost, Flag, Free, Int, Text, Upload
from backend.runtime.errors import InputError
from backend.search.api import ASK_MAX_PASSAGES, MAX_WORDS, MIN_WORDS
from backend.search.api import EMBED_CHUNK
from backend.search.chunked_build import passage_cap
from backend.search.embedders import EMBEDDER_LABELS
from backend.search.index import AUTO, INDEX_KINDS
from backend.search.service import MAX_K

WORD_CHARS = 6  # characters a word takes, space included, about


def _corpus_chars(values: dict) -> int:
    corpus = values.get("choice") or "glossary"
    if corpus == "paste":
        return len(values.get("paste") or "")
    if corpus == "upload":
        f = values.get("file")
        path = f.get("path") if isinstance(f, dict) else f if isinstance(f, str) else None
        try:
            return os.path.getsize(path) if path else 0
        except OSError:
            return 0
    return 0  # a built-in corpus: its vectors are built at set-up


def build_cost(values: dict) -> Cost:
    chars = _corpus_chars(values)
    if not chars:
        return SMALL
    words = max(MIN_WORDS, int(values.get("max_words") or 120))
    text = values.get("paste") if (values.get("choice") == "paste") else None
    lines = sum(1 for line in (text or "").splitlines() if line.strip())
    passages = max(lines, chars // (words * WORD_CHARS))
    cap = passage_cap()
    if cap is not None and passages > cap:
        raise InputError(f"The corpus makes about {passages:,} passages; this public server indexes at most {cap:,} "
                         "per build (TLAB_PUBLIC_MAX_PASSAGES). Send a smaller corpus, or use longer passages "
                         "(max_words).")
    tokens = chars // 4
    kind = "e5_tokens" if values.get("embedder") == "multilingual" else "encoder_tokens"
    step = speeds.seconds(kind, EMBED_CHUNK * min(words * 1.4, 256))  # one chunk of passages (a GPU call), 256 tokens a passage at most
    return Cost(mb=chars * 3 / 2**20 + passages * 384 * 4 * 3 / 2**20 + 100, s=speeds.seconds(kind, tokens),
                stoppable=True, step_s=step, what="embedding this corpus", ask="Send a smaller corpus.")


def ask_cost(values: dict) -> Cost:
    k = min(int(values.get("k") or 5), ASK_MAX_PASSAGES)
    return Cost(mb=300, s=3 + speeds.seconds("encoder_tokens", k * 512) * 3, what="answering from the corpus")


CONTRACTS = {
    "build_index": Contract({"choice": Choice(("glossary", "docstrings", "upload", "paste"), optional=True),
                             "file": Upload(), "paste": Text("paste"), "text_field": Free(200),
                             "title_field": Free(200), "keep_good": Flag(), "max_words": Int(MIN_WORDS, MAX_WORDS),
                             "overlap": Int(0, MAX_WORDS - 1), "index_type": Choice((AUTO,) + tuple(INDEX_KINDS), True),
                             "m": Int(2, 128), "efc": Int(1, 1024), "efs": Int(1, 1024), "nlist": Int(1, 16384),
                             "nprobe": Int(1, 16384), "pq_m": Int(1, 384), "pq_bits": Int(1, 12),
                             "embedder": Choice(tuple(EMBEDDER_LABELS), optional=True)}, build_cost,
                            suite={"choice": "paste", "paste": "A passage about attention.\n" * 40}),
    "search": Contract({"query": Text("query"), "k": Int(1, MAX_K)}, SMALL),
    "ask_corpus": Contract({"question": Text("corpus_question"), "k": Int(1, MAX_K)}, ask_cost),
    "compare_indexes": Contract({"k": Int(1, MAX_K)}, Cost(mb=600, s=30, stoppable=True, step_s=8,
                                                           what="comparing every index type")),
    "evaluate_reader": Contract({}, Cost(mb=400, s=40, what="evaluating the retriever-reader")),
}
