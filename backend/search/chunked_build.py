"""A private corpus embedded chunk by chunk within bounds: de-duplication, the public passage cap,
and a time estimate from the rate measured in this process.

- Identical passages (a pasted sentence repeated 2,000 times chunks into 2,000 identical
  windows) are embedded once: `dedupe` keeps the first and says how many it dropped.
- On a public deployment (`config.public_mode()`) one build takes at most
  `TLAB_PUBLIC_MAX_PASSAGES` passages (default 20,000): `check_cap`.
- `embed_in_chunks` embeds chunk by chunk, measures the embedding rate, tells the user the
  estimated time before a long build (from the rate measured in this process, or on the first
  chunk), refuses up front a build that cannot finish within the request's time budget, and
  checks the budget (deadline, cancel) between chunks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from backend.runtime import budget, config
from backend.runtime.rates import RATES
from backend.search.corpora import Corpus

LONG_BUILD = 2_000  # passages: from here on the user is told the estimated time first
OVER_BUDGET = 1.5  # refuse up front when the estimate exceeds the remaining budget this many times


def dedupe(corpus: Corpus) -> tuple[Corpus, int]:
    """Drop passages whose text repeats an earlier one -> (corpus, how many were dropped)."""
    seen: set[str] = set()
    keep = []
    for p in corpus.passages:
        if p.text in seen:
            continue
        seen.add(p.text)
        keep.append(p)
    dropped = len(corpus.passages) - len(keep)
    if not dropped:
        return corpus, 0
    note = (f"Dropped {dropped:,} identical passage(s): {len(keep):,} unique passage(s) are indexed "
            "(each identical passage is embedded once).")
    return replace(corpus, passages=keep, notes=[*corpus.notes, note]), dropped


def passage_cap() -> int | None:
    """Passages one build may index: TLAB_PUBLIC_MAX_PASSAGES in public mode, else no cap here."""
    if not config.public_mode():
        return None
    return int(getattr(config.get_settings(), "public_max_passages", 20_000))


def check_cap(corpus: Corpus) -> None:
    from backend.runtime.errors import InputError

    cap = passage_cap()
    if cap is not None and len(corpus) > cap:
        raise InputError(
            f"The corpus has {len(corpus):,} passages; this public server indexes at most {cap:,} per build "
            f"(TLAB_PUBLIC_MAX_PASSAGES). Upload a smaller file, use longer passages (max_words), or run the "
            "app yourself for big corpora.")


EMBED_RATE = "embedding characters"  # the RATES key: characters/s (a 120-word passage costs ~7x a 20-word one)


def chars(texts: Sequence[str]) -> int:
    return sum(len(t) for t in texts)


def estimate(n_chars: int, rate: float | None = None) -> float | None:
    """Seconds to embed `n_chars` characters at `rate` (default: the measured one); None before any measurement."""
    return RATES.estimate(EMBED_RATE, n_chars, rate)


def _refuse_if_too_long(left: Sequence[str], total: int, total_s: float, rate: float) -> None:
    b = budget.current()
    if b is None or b.seconds <= 0 or not left:
        return
    est = estimate(chars(left), rate)
    if est is not None and est > OVER_BUDGET * max(b.remaining(), 1e-3):
        per_s = len(left) / est  # passages/s for passages like these
        fits = int(max(0.0, b.remaining()) * per_s)
        raise budget.BudgetExceeded(
            f"Embedding {total:,} passages takes about {total_s:.0f} s at the measured {per_s:.0f} "
            f"passages/s, over this server's time budget of {b.seconds:g} s per request (TLAB_TIME_BUDGET_S); "
            f"{b.remaining():.0f} s are left. About {fits:,} passages fit: use a smaller corpus, or run the app "
            "yourself with a larger TLAB_TIME_BUDGET_S.")


def embed_in_chunks(texts: Sequence[str], embed_chunk: Callable[[list[str]], np.ndarray], chunk: int,
                    progress: Callable[[int, int], None] | None = None,
                    say: Callable[[str], None] | None = None) -> tuple[np.ndarray, dict]:
    """Embed `texts` `chunk` at a time -> (vectors, plan: passages, estimated_s, rate, seconds).

    `progress(done, total)` after each chunk; `say(message)` tells the estimate before a long build.
    """
    texts = list(texts)
    n = len(texts)
    plan = {"passages": n, "estimated_s": None, "rate_per_s": None, "seconds": None}
    chunks = [texts[i:i + chunk] for i in range(0, n, chunk)] or [texts]
    out: list[np.ndarray] = []
    t_start = time.perf_counter()
    done = 0
    own: float | None = None  # characters/s measured on this build's first chunk
    for i, part in enumerate(chunks):
        budget.check(f"embedded {done:,} of {n:,} passages", "Use a smaller corpus.")
        # Before the first chunk: the estimate from earlier builds (a message only). After it: the
        # estimate from this build's own rate, which also decides whether it can fit the budget.
        if n >= LONG_BUILD and i <= 1 and (own or RATES.per_s(EMBED_RATE)) and (i == 1 or plan["estimated_s"] is None):
            rate = own or RATES.per_s(EMBED_RATE)
            left = texts[done:]
            total_s = time.perf_counter() - t_start + estimate(chars(left), rate)
            if own:
                _refuse_if_too_long(left, n, total_s, rate)
            plan["estimated_s"] = round(total_s, 1)
            plan["rate_per_s"] = round(len(left) / estimate(chars(left), rate), 1)  # passages/s, for these passages
            if say is not None:
                say(f"Embedding {n:,} passages: about {total_s:.0f} s at {plan['rate_per_s']:.0f} passages/s")
        t0 = time.perf_counter()
        out.append(embed_chunk(part))
        seconds = time.perf_counter() - t0
        if i == 0 and seconds > 0:
            own = chars(part) / seconds
        RATES.add(EMBED_RATE, chars(part), seconds)
        done += len(part)
        if progress is not None and n:
            progress(done, n)
    plan["seconds"] = round(time.perf_counter() - t_start, 2)
    return np.concatenate(out), plan


def prepare(corpus: Corpus, shared: bool) -> Corpus:
    """A private corpus de-duplicated and held to the public cap; built-in corpora as they are."""
    if shared:
        return corpus
    corpus, _ = dedupe(corpus)
    check_cap(corpus)
    return corpus


class Teller:
    """Wraps a build's progress(fraction, desc): once the estimate is known, every embedding
    message carries it ("Embedding passages 512/20000 · about 95 s in all")."""

    def __init__(self, progress: Callable[[float, str], None] | None):
        self.progress = progress
        self.estimate: str | None = None

    def say(self, message: str) -> None:
        self.estimate = message
        if self.progress is not None:
            self.progress(0.0, message)

    def __call__(self, fraction: float, desc: str) -> None:
        if self.progress is None:
            return
        if self.estimate and desc.startswith("Embedding passages"):
            desc = f"{desc} · {self.estimate}"
        self.progress(fraction, desc)
