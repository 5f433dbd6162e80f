"""The whole page's first tab: seconds from navigation to the Start tab on screen, and what the page's /config
weighs on the wire (plain and gzipped, as the app serves it), with the load average of the box.

Starts `app.py` (local profile) on a free port, reads /config twice (Accept-Encoding identity and gzip), then
opens the page in Chromium (Playwright, /usr/bin/chromium; requests leaving localhost refused) `--runs` times,
each in a new context (a first visit: nothing cached). Also lists the component types that weigh most in the
config. Writes bench/results/page_load.md. Run: .venv/bin/python bench/page_load.py [--runs 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "page_load.md"
FIRST_TAB_JS = """() => { const t = document.querySelector('#start-tab');
    return !!t && t.offsetParent !== null && t.getBoundingClientRect().height > 50; }"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, encoding: str) -> tuple[bytes, str]:
    req = urllib.request.Request(url, headers={"Accept-Encoding": encoding})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return resp.read(), resp.headers.get("Content-Encoding") or "identity"


def wait_up(url: str, proc, limit_s: float = 600) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < limit_s:
        if proc.poll() is not None:
            raise SystemExit(f"app.py exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url + "/config", timeout=5).read()
            return time.perf_counter() - start
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the app did not come up")


def heaviest(config: dict, top: int = 6) -> list[tuple[str, int, int]]:
    """(component type, count, bytes of their JSON) for the heaviest types."""
    size, count = Counter(), Counter()
    for comp in config.get("components", []):
        kind = comp.get("type", "?")
        size[kind] += len(json.dumps(comp))
        count[kind] += 1
    return [(k, count[k], b) for k, b in size.most_common(top)]


API_FIELDS = ("api_info", "api_info_as_input", "api_info_as_output", "example_inputs")  # per component, for API clients


def without_api_info(config: dict) -> tuple[int, int]:
    """(plain, gzipped) bytes of the config without each component's API description: what trimming it saves."""
    slim = {**config, "components": [{k: v for k, v in c.items() if k not in API_FIELDS}
                                     for c in config.get("components", [])]}
    raw = json.dumps(slim).encode()
    return len(raw), len(gzip.compress(raw))


def first_tab_seconds(url: str, runs: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            for _ in range(runs):
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                ctx.route(lambda u: not u.startswith(("http://127.0.0.1", "data:", "blob:")), lambda r: r.abort())
                page = ctx.new_page()
                page.goto(url, wait_until="commit")
                page.wait_for_function(FIRST_TAB_JS, timeout=180_000, polling=50)
                out.append(page.evaluate("() => performance.now()") / 1000)
                ctx.close()
        finally:
            browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TLAB_PROFILE": "local"}
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        up_s = wait_up(url, proc)
        plain, _ = fetch(url + "/config", "identity")
        zipped, enc = fetch(url + "/config", "gzip")
        config = json.loads(plain)
        load0 = os.getloadavg()
        times = first_tab_seconds(url, args.runs)
        load1 = os.getloadavg()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    lines = [
        "| what | figure |",
        "|---|---|",
        f"| first tab on screen (whole page, navigation to the Start tab; {len(times)} first visits) | median "
        f"{statistics.median(times):.2f} s (range {min(times):.2f}-{max(times):.2f}) |",
        f"| /config on the wire | {len(zipped) / 1024:.0f} KB ({enc}); {len(plain) / 1024:.0f} KB plain, "
        f"{len(gzip.compress(plain)) / 1024:.0f} KB gzipped here |",
        f"| components / dependencies in the config | {len(config.get('components', []))} / "
        f"{len(config.get('dependencies', []))} |",
        f"| app start to /config answering | {up_s:.1f} s |",
        "",
        f"Load average {load0[0]:.1f} before the page loads, {load1[0]:.1f} after ({os.cpu_count()} cores): "
        + ("a quiet box." if load0[0] < 1.0 else "not a quiet box (other work shared the cores); compare with care."),
        "",
        "Each component also carries its API description three times (api_info, as input, as output) and its "
        "example inputs, for API clients, not for the page: without them the config would be "
        f"{without_api_info(config)[0] / 1024:.0f} KB plain, {without_api_info(config)[1] / 1024:.0f} KB gzipped "
        f"(vs {len(gzip.compress(plain)) / 1024:.0f} KB). Most of the rest is the props of every tab's components "
        "(text, markdown, HTML), which the page needs to mount a tab when it is opened.",
        "",
        "Heaviest component types in /config (plain JSON bytes):",
        "",
        "| type | count | KB |",
        "|---|---|---|",
        *[f"| {k} | {n} | {b / 1024:.0f} |" for k, n, b in heaviest(config)],
    ]
    text = "\n".join(lines)
    print(text)
    OUT.write_text(text + "\n")


if __name__ == "__main__":
    main()
