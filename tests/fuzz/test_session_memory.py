"""A stranger cannot grow the app's memory by visiting: 150 new sessions with large requests, after a crowd of 40 has warmed it.

Before the bound, each fresh session that sent a 20,000-character /tokenize kept ~11 MB in the
process for good (Gradio's per-session copies of every value, for deep links): 150 sessions
took it from 0.6 to 2.3 GB. Now what a session keeps is small and the count is capped.

On the suite's shared app (the local profile, as any visitor finds it after the e2e and browser
tiers' sessions): the growth is measured from its own state after a crowd's warm-up. Four requests at a
time fill glibc's per-thread malloc arenas once: measured on a fresh app, 5 visits one by one left it at
879 MB, 40 crowd visits at 1,007 MB, then 60, 100, 150, 200 and 250 visits at 1,012, 1,019, 1,042,
1,011 and 1,036 MB (no growth per visit). Warmed one by one, the arenas' fill counted as growth: CI saw
211 MB for 300 visits. 150 visits against 100 MB keep the check's edge: before the bound they grew the
app by about 1.6 GB (11 MB a visit).
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
import time
import uuid

from tests.helpers.app import app_process, rss_mb
from tests.helpers.raw import call

SESSIONS = 150
WARM_SESSIONS = 40  # four at a time, as the measured visits come: the allocator's arenas fill here
CHARS = 20_000
ALLOWED_GROWTH_MB = 100


def test_150_new_sessions_with_large_requests_leave_memory_where_it_was(app_url):
    words = "the quick brown fox jumps over a lazy dog while tokenizers split unusual words".split()
    rng = random.Random(0)

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(CHARS // 4))[:CHARS]

    proc = app_process(app_url)

    def visit(t: str) -> str:  # a new visitor each time: a fresh session hash
        event, out = call(app_url, "/tokenize", [t, True], session_hash=uuid.uuid4().hex)
        return event if event == "complete" else f"{event}: {str(out)[:200]}"

    with ThreadPoolExecutor(4) as pool:  # four at a time, as a crowd would come
        warm = list(pool.map(visit, [text() for _ in range(WARM_SESSIONS)]))  # the tokenizers load, arenas fill
        assert warm == ["complete"] * WARM_SESSIONS, [a for a in warm if a != "complete"][:3]
        time.sleep(1)
        before = rss_mb(proc)
        answers = list(pool.map(visit, [text() for _ in range(SESSIONS)]))
    assert answers == ["complete"] * SESSIONS, [a for a in answers if a != "complete"][:3]
    time.sleep(2)
    grown = rss_mb(proc) - before
    assert grown < ALLOWED_GROWTH_MB, f"{SESSIONS} sessions grew the app by {grown:.0f} MB"
