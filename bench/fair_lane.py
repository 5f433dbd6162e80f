"""Fair long lane: how long does an honest visitor's short summary wait while a hostile address holds
both of its long-lane places with maximum-cost jobs? (225 s end to end without the per-address rule.)

Starts app.py in public mode on loopback twice, told to trust X-Forwarded-For (as on a Space):
- "fair": as shipped (public mode: an address runs at most TLAB_MODEL_CONCURRENCY long jobs, the
  long lane's last slot waits for another address, `components/shell/lanes.py` fair_pick);
- "one address may use every slot": the same app with TLAB_CLIENT_SHARE=1 (the rule for a server of
  your own), so the hostile pair takes both slots: the wait the rule saves.
In each, the hostile address (TEST-NET-3) submits two long /summarize jobs (a 20,000-character text,
3 beams, 256 new tokens: each runs to the time budget), then the honest address (TEST-NET-2) asks for
a short summary; its end-to-end seconds are the row. Writes bench/results/fair_lane.md.

    .venv/bin/python bench/fair_lane.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harness import ROOT, start_app, stop  # noqa: E402

HOSTILE, HONEST = "203.0.113.66", "198.51.100.7"
LONG_TEXT = ("The port authority said on Monday that the new harbour wall, begun in 1851 and finished two "
             "years later, protects about 3,000 people who live on the low ground behind it. ") * 110
SHORT_TEXT = ("The harbour wall was finished in 1853. It protects about 3,000 people. The town paid for "
              "half of it and the state for the rest.")


def client(url: str, address: str):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": 600}, headers={"X-Forwarded-For": address})


def scenario(env: dict) -> dict:
    proc, url = start_app({"TLAB_PUBLIC": "1", "TLAB_TRUST_FORWARDED": "1", **env}, "fair-lane-app.log")
    try:
        warm = client(url, HONEST)
        warm.predict(SHORT_TEXT, 8, 0, 1, "", "", api_name="/summarize")  # the model loads once, before timing
        jobs = []
        for _ in range(2):  # two fresh sessions of one address: its two places
            jobs.append(client(url, HOSTILE).submit(LONG_TEXT, 256, 0, 3, "", "", api_name="/summarize"))
            time.sleep(3)
        start = time.perf_counter()
        r = client(url, HONEST).predict(SHORT_TEXT, 48, 0, 1, "", "", api_name="/summarize")
        waited = time.perf_counter() - start
        for j in jobs:
            j.cancel()
        return {"honest_s": round(waited, 1), "summary": (r[0] if isinstance(r, (list, tuple)) else r)}
    finally:
        stop(proc)


def main() -> None:
    load0 = os.getloadavg()
    rows = [("fair (as shipped, public mode)", scenario({})),
            ("one address may use every slot (TLAB_CLIENT_SHARE=1)", scenario({"TLAB_CLIENT_SHARE": "1"}))]
    load1 = os.getloadavg()
    lines = ["# Fair long lane (bench/fair_lane.py)", "",
             "A hostile address holds both of its long-lane places with maximum-cost /summarize jobs (20,000 "
             "characters, 3 beams, 256 new tokens: each runs to the 120 s time budget); then an honest address "
             "asks for a short summary. Public mode, local profile, loopback, X-Forwarded-For trusted.", "",
             f"Box: {os.cpu_count()} cores; load average at start {load0[0]:.2f}, at end {load1[0]:.2f}.", "",
             "| long lane | honest visitor's short summary, end to end (s) |", "|---|---|"]
    lines += [f"| {name} | {r['honest_s']} |" for name, r in rows]
    lines += ["", "Target: under 60 s while a hostile address holds its share."]
    out = ROOT / "bench" / "results" / "fair_lane.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
