"""Serial vs batched short requests: 20 concurrent clients, the same requests, two app runs.

Run 1 starts the app with TLAB_BATCH_MAX=1 (every request its own forward, one at a time: the
serial queue); run 2 with the default (requests that arrive together share one forward,
backend/engines/embedding/batching.py). Reports throughput and p50/p95 per endpoint into
bench/results/load_batching.md. Targets: >= 3x throughput, /classify
p95 < 2 s when batched.

    .venv/bin/python bench/load.py --batching            # 20 clients x 10 requests per run
    .venv/bin/python bench/load_batching.py --requests 100
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

from bench.harness import GLOSSARY, LETTER, Record, rss_mb, start_app  # noqa: E402

SENTENCES = [
    LETTER,
    "The delivery was late and the package arrived damaged. Very disappointing.",
    "What a wonderful surprise, the team exceeded every expectation!",
    "The meeting is scheduled for Tuesday at ten.",
    "I can't believe how good this phone's battery is.",
    "The service was slow and the food was cold.",
]
MIXES = {
    "classify": {"/classify": lambda s: (s, False, "", "")},
    "classify + zero-shot + search": {
        "/classify": lambda s: (s, False, "", ""),
        "/zero_shot": lambda s: (s, "complaint, praise, question", False, "This text is about {}.", False, ""),
        "/search": lambda s: (s, 3),
    },
}


def run_mix(url: str, mix: dict, clients: int, requests: int) -> tuple[Record, float]:
    from gradio_client import Client

    rec = Record()
    per = [requests // clients + (1 if i < requests % clients else 0) for i in range(clients)]
    ready = []
    for _ in range(clients):  # connect (and build the session's glossary index) before timing
        c = Client(url, verbose=False)
        if "/search" in mix:
            c.predict(*GLOSSARY, api_name="/build_index")
        ready.append(c)

    def worker(i: int) -> None:
        rng = random.Random(i)
        for _ in range(per[i]):
            api = rng.choice(list(mix))
            rec.call(ready[i], api, mix[api](rng.choice(SENTENCES)))

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(worker, range(clients)))
    return rec, time.perf_counter() - t0


def p95(rec: Record, api: str) -> float:
    lat = sorted(rec.lat[api])
    return lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan")


def in_process(clients: int, per_client: int = 10) -> list[str]:
    """The model side alone: `pipelines.classify` from `clients` threads, serial vs batched,
    in this process (no HTTP, no queue, no formatting), with the forwards the batcher ran."""
    import threading

    os.environ.update(TLAB_PROFILE="local", HF_HUB_OFFLINE="1")
    from backend.engines.embedding import batching
    from backend import pipelines

    rows = []
    for text_name, text in (("the letter (~90 tokens)", LETTER), ("one sentence (~15 tokens)", SENTENCES[3])):
        pipelines.classify(text)  # load + warm
        rates = {}
        for mode, batch_max in (("serial", "1"), ("batched", "16")):
            os.environ["TLAB_BATCH_MAX"] = batch_max
            before = sum(c["forwards"] for c in batching.stats()), sum(c["requests"] for c in batching.stats())

            def worker():
                for _ in range(per_client):
                    pipelines.classify(text)

            threads = [threading.Thread(target=worker) for _ in range(clients)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rates[mode] = clients * per_client / (time.perf_counter() - t0)
            after = sum(c["forwards"] for c in batching.stats()), sum(c["requests"] for c in batching.stats())
            forwards, requests = after[0] - before[0], after[1] - before[1]
            rows.append(f"| {text_name} | {mode} | {rates[mode]:.1f} | **{rates[mode] / rates['serial']:.2f}x** | "
                        + (f"{forwards} forwards for {requests} requests |" if requests else "one forward each |"))
    os.environ.pop("TLAB_BATCH_MAX", None)
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--requests", type=int, default=200, help="per mix and mode")
    args = p.parse_args(argv)
    results: dict[tuple[str, str], tuple[Record, float]] = {}
    for mode, batch_max in (("serial", "1"), ("batched", "16")):
        proc, url = start_app({"TLAB_PUBLIC": "0", "TLAB_BATCH_MAX": batch_max, "TLAB_TIME_BUDGET_S": "600"})
        try:
            from gradio_client import Client

            warm = Client(url, verbose=False)  # load the models once, outside the timing
            warm.predict(*GLOSSARY, api_name="/build_index")
            for api, make in MIXES["classify + zero-shot + search"].items():
                warm.predict(*make(LETTER), api_name=api)
            for name, mix in MIXES.items():
                results[(name, mode)] = run_mix(url, mix, args.clients, args.requests)
            rss = rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        print(f"{mode}: done, RSS {rss:.0f} MB", flush=True)

    lines = [
        f"# Serial vs batched short requests ({args.clients} concurrent clients, {args.requests} requests per "
        f"mix and mode; {os.cpu_count()} cores; load average at the end {os.getloadavg()[0]:.1f})", "",
        "Serial: TLAB_BATCH_MAX=1, one forward per request, one at a time. Batched: the default "
        "(TLAB_BATCH_MAX=16): requests that arrive while a forward runs share the next one "
        "(backend/engines/embedding/batching.py), on the `batch` lane (16 handler slots).", "",
        "| mix | mode | requests | failures | wall s | requests/s | throughput vs serial | /classify p50 s | /classify p95 s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in MIXES:
        base = None
        for mode in ("serial", "batched"):
            rec, wall = results[(name, mode)]
            n = sum(len(v) for v in rec.lat.values()) + rec.failures
            rate = n / wall
            base = base or rate
            lat = sorted(rec.lat["/classify"])
            p50 = lat[len(lat) // 2] if lat else float("nan")
            lines.append(f"| {name} | {mode} | {n} | {rec.failures} | {wall:.1f} | {rate:.1f} | "
                         f"**{rate / base:.2f}x** | {p50:.2f} | {p95(rec, '/classify'):.2f} |")
    lines += ["", f"## The model side alone: `pipelines.classify` from {args.clients} threads in one process "
              "(no HTTP, queue or formatting)",
              "| text | mode | requests/s | vs serial | forwards |", "|---|---|---|---|---|",
              *in_process(args.clients)]
    lines += ["", "## Per endpoint", "| mix | mode | endpoint | requests | failures | p50 s | p95 s |",
              "|---|---|---|---|---|---|---|"]
    for (name, mode), (rec, _) in results.items():
        lines += [f"| {name} | {mode} {row}" for row in rec.rows()]
    table = "\n".join(lines)
    print(table)
    (ROOT / "bench" / "results" / "load_batching.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
