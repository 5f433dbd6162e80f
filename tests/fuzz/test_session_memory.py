"""A stranger cannot grow the app's memory by visiting: 300 new sessions with large requests.

Before the bound, each fresh session that sent a 20,000-character /tokenize kept ~11 MB in the
process for good (Gradio's per-session copies of every value, for deep links): 150 sessions
took it from 0.6 to 2.3 GB. Now what a session keeps is small and the count is capped.

On the suite's shared app (the local profile, as any visitor finds it after the e2e and browser
tiers' sessions): the growth is measured from its own state before the 300 visits.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
import time
import uuid

from tests.conftest import app_process, rss_mb
from tests.fuzz.raw import call

SESSIONS = 300
CHARS = 20_000
ALLOWED_GROWTH_MB = 200


def test_300_new_sessions_with_large_requests_leave_memory_where_it_was(app_url):
    words = "the quick brown fox jumps over a lazy dog while tokenizers split unusual words".split()
    rng = random.Random(0)

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(CHARS // 4))[:CHARS]

    proc = app_process(app_url)
    for _ in range(5):  # warm: the tokenizers load, the allocator settles
        assert call(app_url, "/tokenize", [text(), True], session_hash=uuid.uuid4().hex)[0] == "complete"
    time.sleep(1)
    before = rss_mb(proc)
    texts = [text() for _ in range(SESSIONS)]

    def visit(t: str) -> str:  # a new visitor each time: a fresh session hash
        event, out = call(app_url, "/tokenize", [t, True], session_hash=uuid.uuid4().hex)
        return event if event == "complete" else f"{event}: {str(out)[:200]}"

    with ThreadPoolExecutor(4) as pool:  # four at a time, as a crowd would come
        answers = list(pool.map(visit, texts))
    assert answers == ["complete"] * SESSIONS, [a for a in answers if a != "complete"][:3]
    time.sleep(2)
    grown = rss_mb(proc) - before
    assert grown < ALLOWED_GROWTH_MB, f"{SESSIONS} sessions grew the app by {grown:.0f} MB"
