"""Which index configuration of a sweep may be called the fastest: the lowest median query time against the
next, on the same timed queries (paired), through `backend.runtime.stats.claim`."""

from __future__ import annotations

from backend.runtime import stats


def fastest_claim(rows: list[dict]) -> list[dict]:
    """The lowest median query time, against the next (the same queries, paired), through stats.claim: the
    fastest row gets `fastest_claim` (claimed or not, with the reason); times under a tenth of a millisecond
    on a shared CPU are read as they are."""
    timed = sorted((r for r in rows if r.get("query_ms_each")), key=lambda r: r["query_ms_median"])
    if len(timed) >= 2 and len(timed[0]["query_ms_each"]) == len(timed[1]["query_ms_each"]):
        a, b = timed[1], timed[0]
        r = stats.paired_ratio(a["query_ms_each"], b["query_ms_each"])
        n = len(a["query_ms_each"])
        claim = stats.claim(stats.Estimate(a["label"], r[0], r[1], r[2], n), stats.Estimate(b["label"], 1, 1, 1, n),
                            r, ratio=True, higher_is_better=False, min_n=stats.MIN_CALLS, min_change=stats.SPEED_NOISE,
                            units="timed queries", better_word="the fastest",
                            what=f"ratio of {a['label']}'s median query time to {b['label']}'s")
        b["fastest_claim"] = claim.as_dict()
    return rows
