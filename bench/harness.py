"""What the benchmarks share: one way to start app.py, the shipped example texts, a latency record.

Every bench script that drives the app through gradio_client starts it here, so a change in how
the app starts (flags, environment, the wait for its API) is made once.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LETTER = "Dear Amazon, I ordered a Megatron figure from Germany but got Optimus Prime. Please send Megatron."
GLOSSARY = ("glossary", None, "", None, "", False, 120, 30, "flat", 32, 40, 16, 100, 8, 16, 8)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(env: dict, log_name: str = "load-app.log", flags: tuple = ()) -> tuple[subprocess.Popen, str]:
    """app.py on a free loopback port, local profile, `env` added -> (process, url) once its API answers."""
    port = free_port()
    log = open(ROOT / "bench" / "results" / log_name, "w")
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--host", "127.0.0.1", "--port", str(port),
                             "--profile", "local", *flags], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, **env, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 240
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"app.py exited; see bench/results/{log_name}")
        try:
            urllib.request.urlopen(url + "gradio_api/info", timeout=5)
            return proc, url
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("app.py did not answer within 240 s") from None
            time.sleep(1)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Record:
    """Latencies and failures per endpoint (thread-safe)."""

    def __init__(self):
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.fail: dict[str, list[str]] = defaultdict(list)
        self.lock = threading.Lock()

    def call(self, client, api: str, args: tuple):
        t0 = time.perf_counter()
        try:
            out = client.predict(*args, api_name=api)
        except Exception as exc:  # a failure is a result here, counted and reported
            with self.lock:
                self.fail[api].append(str(exc)[:200])
            return None
        with self.lock:
            self.lat[api].append(time.perf_counter() - t0)
        return out

    def rows(self) -> list[str]:
        out = []
        for api in sorted(set(self.lat) | set(self.fail)):
            lat = sorted(self.lat[api])
            p50 = statistics.median(lat) if lat else float("nan")
            p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan")
            out.append(f"| {api} | {len(lat) + len(self.fail[api])} | {len(self.fail[api])} | {p50:.2f} | {p95:.2f} |")
        return out

    @property
    def failures(self) -> int:
        return sum(len(v) for v in self.fail.values())
