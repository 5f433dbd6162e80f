"""Interventions benchmark: the head sweep's cost per head against one plain forward, same run.

  .venv/bin/python bench/interventions.py [--repeats 5]

For each local model (the all-MiniLM-L6-v2 encoder, the SmolLM2-135M decoder): the median time
of a plain forward of the tab's example text (`torch.no_grad`, the model as loaded), then a
whole-layer `/sweep_heads` (one forward per head with that head zeroed by a hook), reported as
seconds per head and as a ratio to the plain forward. A sweep head is one hooked forward plus
the KL (or cosine) against the first run, so the ratio is the hooks' and the metric's overhead
(target <= 1.3x). Writes bench/results/interventions.md. Ratios, not absolute times, are the
point: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from backend import hub  # noqa: E402
from backend.interventions import api  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "interventions.md"
LAYER = 2


def plain_forward_s(role: str, text: str, repeats: int) -> float:
    lm = hub.load(role)
    enc = {k: v.to(lm.device) for k, v in lm.tokenizer(text, return_tensors="pt").items()}
    times = []
    with torch.no_grad():
        lm.model(**enc)  # warm-up
        for _ in range(repeats):
            t0 = time.perf_counter()
            lm.model(**enc)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for role in ("encoder", "decoder"):
        text = api.EXAMPLES[role][0]
        api.sweep_heads(role, text, LAYER)  # warm-up (loads the model)
        per_head = []
        for _ in range(max(1, args.repeats // 2)):
            r = api.sweep_heads(role, text, LAYER)
            assert r["complete"], r["finish_reason"]
            per_head.append(r["seconds_per_head"])
            order = [h["head"] for h in r["heads"]]
        plain = plain_forward_s(role, text, args.repeats)
        sweep_s = statistics.median(per_head)
        rows.append((role, r["model"]["checkpoint"], len(r["tokens"]), r["num_heads"], sweep_s, plain, order))
    lines = ["# Interventions benchmark (bench/interventions.py)", "",
             f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
             f"{torch.get_num_threads()} threads; load average {os.getloadavg()[0]:.1f} at the end; "
             f"layer {LAYER}, the tab's example texts.", "",
             "| model | checkpoint | tokens | heads | sweep: s per head | plain forward (s) | per head / forward |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for role, ckpt, n, heads, sweep_s, plain, _ in rows:
        lines.append(f"| {role} | {ckpt} | {n} | {heads} | {sweep_s:.4f} | {plain:.4f} | {sweep_s / plain:.2f}x |")
    lines += ["", "Head ranking of the last sweep (most important first): "
              + "; ".join(f"{role}: {order}" for role, *_, order in rows) + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
