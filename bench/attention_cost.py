"""Chapter 11's cost of attention, measured on this machine (From scratch tab, /attention_cost).

  .venv/bin/python bench/attention_cost.py            # ~5-8 min on a 2-core CPU
  .venv/bin/python bench/attention_cost.py --quick    # up to 1,024 tokens

1. One attention layer at 64 ... 4,096 tokens (the app's request stops at 2,048), in the encoder's
   geometry (12 heads x 32, bidirectional) and the decoder's (9 heads x 64, causal): written out by
   hand, torch's fused scaled_dot_product_attention (the plain library call: the ratio is ours
   against it), a sliding window computed block by block, linear attention. Time: the fastest of
   3+ calls on one thread; memory: peak resident memory above the call's start. A non-negative
   fit time = a + b T + c T^2 for each.
2. A whole forward of the packaged models: the encoder up to its 512 positions, the decoder up to
   4,096 tokens, with the fused kernel (`sdpa`) and written out (`eager`, which the app loads to
   show attention weights; the decoder's up to 1,024 here), and the quadratic fit of the forward's
   time, on one torch thread.
3. Sliding-window, block-sparse and linear attention on each model's own queries and keys (the
   app's default text): mean relative error against full attention per layer.

Writes bench/results/attention_cost.md. Ratios within one run are the point: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from backend import hub  # noqa: E402
from backend.scratch import attention_cost as cost  # noqa: E402
from backend.scratch import attention_cost_api as api  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "attention_cost.md"
GEOMETRIES = (("encoder", 12, 32, False), ("decoder", 9, 64, True))


def layer_section(max_tokens: int) -> list[str]:
    lines = ["## 1. One attention layer (time ms; peak MB above the call's start)", ""]
    for role, heads, d, causal in GEOMETRIES:
        lengths = api.lengths_up_to(max_tokens)
        rows = cost.measure_lengths(lengths, heads, d, window=64, causal=causal, repeats=3)
        by = {(r["tokens"], r["method"]): r for r in rows}
        lines += [f"### {role} geometry: {heads} heads x {d}, {'causal' if causal else 'bidirectional'}, window ±64", "",
                  "| tokens | full by hand | fused (SDPA) | ours / fused | sliding window | linear | full MB | fused MB "
                  "| window MB | linear MB |", "|---|---|---|---|---|---|---|---|---|---|"]
        for t in lengths:
            f, s, w, li = (by[t, m] for m in cost.METHODS)
            lines.append(f"| {t:,} | {f['seconds'] * 1e3:,.2f} | {s['seconds'] * 1e3:,.2f} | "
                         f"{f['seconds'] / s['seconds']:.2f}x | {w['seconds'] * 1e3:,.2f} | {li['seconds'] * 1e3:,.2f} | "
                         f"{f['peak_mb']} | {s['peak_mb']} | {w['peak_mb']} | {li['peak_mb']} |")
        lines += ["", "| method | c (s per token²) | b (s per token) | T² share at the longest | last doubling: time x |",
                  "|---|---|---|---|---|"]
        for m in cost.METHODS:
            mine = [r for r in rows if r["method"] == m]
            fit = cost.fit_quadratic([r["tokens"] for r in mine], [r["seconds"] for r in mine])
            lines.append(f"| {m} | {fit['c']:.3g} | {fit['b']:.3g} | {fit['quadratic_share_at_longest']:.0%} | "
                         f"{2 ** fit['loglog_slope_last']:.2f} |")
        lines.append("")
        print("\n".join(lines[-8:]), flush=True)
    return lines


def _forward_seconds(model, t: int) -> float:
    """The faster of 2 forwards (1 from 2,048 tokens on: a minute each on one thread)."""
    repeats = 2 if t < 2048 else 1
    ids = torch.randint(5, 1000, (1, t), generator=torch.Generator().manual_seed(t))
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            t0 = time.perf_counter()
            model(input_ids=ids, attention_mask=torch.ones_like(ids))
            best = min(best, time.perf_counter() - t0)
    return best


def forward_section(max_tokens: int) -> list[str]:
    lines = ["## 2. A whole forward of the packaged models (seconds, the faster of 2 below 2,048 tokens; one "
             "thread: two threads on a shared 2-core box stall at every barrier)", "",
             "| model | tokens | fused (sdpa) | written out (eager) | eager / sdpa |", "|---|---|---|---|---|"]
    fits = []
    torch.set_num_threads(1)
    for role, cap, eager_cap in (("encoder", 512, 512), ("decoder", max_tokens, min(1024, max_tokens))):
        model = hub.load(role).model
        before = getattr(model.config, "_attn_implementation", "eager")
        lengths = api.lengths_up_to(cap)
        sdpa_times = []
        try:
            for t in lengths:
                model.set_attn_implementation("sdpa")
                fast = _forward_seconds(model, t)
                sdpa_times.append(fast)
                slow = None
                if t <= eager_cap:
                    model.set_attn_implementation("eager")
                    slow = _forward_seconds(model, t)
                lines.append(f"| {role} | {t:,} | {fast:.3f} | {'-' if slow is None else f'{slow:.3f}'} | "
                             f"{'-' if slow is None else f'{slow / fast:.2f}x'} |")
                print(lines[-1], flush=True)
        finally:
            model.set_attn_implementation(before)
        fit = cost.fit_quadratic(lengths, sdpa_times)
        fits.append(f"- {role} forward (sdpa): time = {fit['a']:.3g} + {fit['b']:.3g} T + {fit['c']:.3g} T² s; the T² "
                    f"term is {fit['quadratic_share_at_longest']:.0%} of the time at {lengths[-1]:,} tokens.")
    return lines + [""] + fits + [""]


def sparse_section() -> list[str]:
    lines = ["## 3. Sparse and linear attention on the models' own q, k, v (default text; window ±16, blocks of "
             "16, 2 global tokens, 1 random block)", "",
             "| model | tokens | variant | share of pairs scored | weight kept | mean relative error | worst layer's "
             "mean |", "|---|---|---|---|---|---|---|"]
    for role in ("encoder", "decoder"):
        d = api.sparse_attention(role=role)
        share = {r["method"]: r for r in d["cost"]}
        for name in api.VARIANTS:
            per_layer = [sum(row) / len(row) for row in d["errors"][name]]
            kept = share[name].get("weight_kept")
            lines.append(f"| {role} | {d['num_tokens']} | {name} | {share[name]['share']:.0%} | "
                         f"{'-' if kept is None else f'{kept:.0%}'} | {d['mean_error'][name]:.1%} | "
                         f"{max(per_layer):.1%} (layer {per_layer.index(max(per_layer))}) |")
    return lines + [""]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    top = 1024 if args.quick else 4096
    start, load_before = time.perf_counter(), os.getloadavg()[0]
    body = layer_section(top) + forward_section(top) + sparse_section()
    head = ["# Cost of attention (chapter 11)", "",
            f"`bench/attention_cost.py{' --quick' if args.quick else ''}` on {platform.machine()}, "
            f"{os.cpu_count()} CPUs, torch {torch.__version__}, {time.strftime('%Y-%m-%d')}; "
            f"{time.perf_counter() - start:.0f} s; load average {load_before:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end. The machine is shared: compare within one table.", ""]
    OUT.write_text("\n".join(head + body))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
