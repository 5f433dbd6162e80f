"""Load on the running app (loopback only): concurrency, a long sequential run, memory, lanes.

Starts app.py on a free loopback port (local profile) and drives it with gradio_client:
1. warm-up: one call of every endpoint in the mix;
2. 20 concurrent clients sending 200 mixed requests;
3. 1,000 sequential requests (RSS growth after warm-up: target < 50 MB);
4. the short lane: /classify latency while a long build (20k passages) runs (target p95 < 5 s).
Failures, p50/p95 per endpoint and the app's RSS go to bench/results/load.md.

    .venv/bin/python bench/load.py            # the full run (about 15-25 min on 2 busy cores)
    .venv/bin/python bench/load.py --quick    # 5 clients x 40, 150 sequential, a 5k build
    .venv/bin/python bench/load.py --models   # the model-loading table (bench/results/load_models.md)
    .venv/bin/python bench/load.py --batching # serial vs batched short requests (bench/results/load_batching.md)
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TLAB_PROFILE"] = "local"

from bench.harness import GLOSSARY, LETTER, Record, rss_mb, start_app  # noqa: E402

# endpoint -> args of one cheap, valid call (what a visitor's short requests look like)
MIX: dict[str, tuple] = {
    "/classify": (LETTER, False, "", ""),
    "/zero_shot": (LETTER, "complaint, praise", False, "This text is about {}.", False, ""),
    "/tokenize": ("Tokenizing text is a core task of NLP.", True),
    "/attention": ("time flies like an arrow", "", "encoder", -1),
    "/decode": ("Once upon a time", {"strategy": "greedy", "max_new_tokens": 8}),
    "/search": ("What does top-p sampling keep?", 3),
}
SEQUENTIAL = ("/classify", "/tokenize", "/decode", "/search")


# ------------------------------------------------------------------------------ requests


def client_for(url: str):
    from gradio_client import Client

    c = Client(url, verbose=False)
    c.predict(*GLOSSARY, api_name="/build_index")  # /search needs an index in the session
    return c


def concurrent(url: str, clients: int, requests: int, rec: Record) -> float:
    per = [requests // clients + (1 if i < requests % clients else 0) for i in range(clients)]

    def worker(i: int) -> None:
        rng = random.Random(i)
        c = client_for(url)
        for _ in range(per[i]):
            api = rng.choice(list(MIX))
            rec.call(c, api, MIX[api])

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(worker, range(clients)))
    return time.perf_counter() - t0


def sequential(url: str, n: int, rec: Record) -> float:
    c = client_for(url)
    t0 = time.perf_counter()
    for i in range(n):
        api = SEQUENTIAL[i % len(SEQUENTIAL)]
        rec.call(c, api, MIX[api])
    return time.perf_counter() - t0


def passages(n: int) -> str:
    rng = random.Random(0)
    words = ("attention transformer token embedding decoder encoder layer head softmax query key value "
             "beam sample greedy corpus index vector search cosine model train").split()
    return "\n".join(f"{i} " + " ".join(rng.choice(words) for _ in range(24)) for i in range(n))


def short_lane(url: str, n_passages: int, every_s: float = 1.0) -> dict:
    """/classify once a second while a long build runs in another session."""
    from gradio_client import Client

    builder = Client(url, verbose=False)
    asker = Client(url, verbose=False)
    rec = Record()
    args = ("paste", None, passages(n_passages), None, "", False, 120, 30, "flat", 32, 40, 16, 100, 8, 16, 8)
    t0 = time.perf_counter()
    job = builder.submit(*args, api_name="/build_index")
    time.sleep(3)  # the build is under way (parsing, then embedding)
    while not job.done():
        rec.call(asker, "/classify", MIX["/classify"])
        time.sleep(every_s)
    try:
        stats = job.result()[1]
        build = {"ok": True, "seconds": time.perf_counter() - t0, "count": stats["count"],
                 "embedding": stats.get("embedding")}
    except Exception as exc:  # a budget message is an outcome to report, not a crash
        build = {"ok": False, "seconds": time.perf_counter() - t0, "error": str(exc)[:300]}
    return {"record": rec, "build": build}


# ------------------------------------------------------------------------------ main


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer clients and requests, a smaller build")
    p.add_argument("--models", action="store_true", help="the model-loading benchmark instead")
    p.add_argument("--batching", action="store_true", help="serial vs batched short requests instead")
    args = p.parse_args(argv)
    if args.models:
        from bench.load_models import main as models_main

        return models_main()
    if args.batching:
        from bench.load_batching import main as batching_main

        return batching_main([])
    clients, mixed, seq, build_n = (5, 40, 150, 5_000) if args.quick else (20, 200, 1_000, 20_000)
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    # A long budget: this measures lanes and memory; a busy shared box would refuse the build up front.
    proc, url = start_app({"TLAB_PUBLIC": "0", "TLAB_TIME_BUDGET_S": "1800"})
    try:
        rss_start = rss_mb(proc.pid)
        warm = Record()
        c = client_for(url)
        for api, a in MIX.items():
            warm.call(c, api, a)
        rss_warm = rss_mb(proc.pid)
        rec_c = Record()
        t_conc = concurrent(url, clients, mixed, rec_c)
        rss_conc = rss_mb(proc.pid)
        rec_s = Record()
        rss_seq0 = rss_mb(proc.pid)
        t_seq = sequential(url, seq, rec_s)
        rss_end = rss_mb(proc.pid)
        lane = short_lane(url, build_n)
        rss_lane = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    head = "| endpoint | requests | failures | p50 s | p95 s |\n|---|---|---|---|---|"
    lane_rec = lane["record"]
    lat = sorted(lane_rec.lat["/classify"])
    lane_p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan")
    b = lane["build"]
    build_line = (f"build of {b.get('count', build_n):,} passages finished in {b['seconds']:.0f} s"
                  + (f" (embedding: {b['embedding']})" if b.get("embedding") else "")
                  if b["ok"] else f"build ended after {b['seconds']:.0f} s with: {b['error']}")
    mode = "quick" if args.quick else "full"
    lines = [
        f"# Load ({mode} run, loopback, local profile, TLAB_TIME_BUDGET_S=1800, {os.cpu_count()} cores shared with "
        f"other work; load average at the end {os.getloadavg()[0]:.1f})", "",
        f"## {clients} concurrent clients, {mixed} mixed requests ({t_conc:.0f} s)", head, *rec_c.rows(), "",
        f"## {seq} sequential requests ({t_seq:.0f} s)", head, *rec_s.rows(), "",
        f"## Short lane: /classify once a second while a {build_n:,}-passage build runs", head, *lane_rec.rows(), "",
        build_line, "",
        "## Memory (app process RSS)",
        "| when | MB |", "|---|---|",
        f"| start (page up, no model) | {rss_start:.0f} |",
        f"| after warm-up (one call of each endpoint) | {rss_warm:.0f} |",
        f"| after the concurrent phase | {rss_conc:.0f} |",
        f"| after the {seq} sequential requests | {rss_end:.0f} |",
        f"| after the build | {rss_lane:.0f} |", "",
        "## Targets",
        f"- failures: {rec_c.failures + rec_s.failures + lane_rec.failures} (target 0)",
        f"- RSS growth over the {seq} sequential requests: {rss_end - rss_seq0:+.0f} MB; since warm-up "
        f"{rss_end - rss_warm:+.0f} MB (target < 50 MB)",
        f"- /classify p95 during the build: {lane_p95:.2f} s (target < 5 s)",
    ]
    fails = [f"- {api}: {msgs[0]}" for r in (rec_c, rec_s, lane_rec) for api, msgs in r.fail.items() if msgs]
    if fails:
        lines += ["", "## First failure per endpoint", *fails]
    table = "\n".join(lines)
    print(table)
    (ROOT / "bench" / "results" / "load.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
