"""Benchmark: the Why tab's attributions on the shipped sentiment test set (82 sentences).

Per method: on how many sentences removing its top 3 tokens lowers the classifier's probability
of its predicted label more than removing 3 random tokens does (the mean of 20 fresh random
draws, not the orders the app ranked with); the same for "the method the app ranks most
faithful" on each sentence (target: >= 80%); integrated gradients' completeness gap at the
default 32 steps; and each method's cost against one forward pass of the same input, measured
in the same run. Then /attribute at its defaults on a 128-token input for the classifier and
the decoder, against the request budget.

    .venv/bin/python bench/attribution.py           # ~10-17 min on 2 shared cores
    .venv/bin/python bench/attribution.py --extra   # + IG's gap by steps, the decoder by prompt length
    .venv/bin/python bench/attribution.py --decoder # the decoder's removals with and without the cached prefix
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")
os.environ.setdefault("TLAB_FAIR_THREADS", "0")  # this run sets the thread count itself (below)
THREADS = int(os.environ.get("BENCH_THREADS", "1"))  # 1: on a shared, busy 2-core box a 2-thread team stalls

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend import hub  # noqa: E402
from backend.attribution import api, tasks  # noqa: E402
from backend.attribution.checks import ranking  # noqa: E402
from backend.runtime.budget import BudgetExceeded, default_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "assets" / "data" / "sentiment" / "test.jsonl"
OUT = ROOT / "bench" / "results" / "attribution.md"
FRESH_RANDOM = 20
K = 3


def top_k_drops(target, scores: dict, rng) -> tuple[dict, float]:
    """f(text) - f(text without a method's top K tokens), per method; and the mean over fresh random K-sets."""
    n = len(target.positions)
    k = min(K, n)
    rows, names = [], list(scores)
    for m in names:
        keep = np.ones(n, dtype=bool)
        keep[ranking(np.asarray(scores[m]))[:k]] = False
        rows.append(keep)
    for _ in range(FRESH_RANDOM):
        keep = np.ones(n, dtype=bool)
        keep[rng.choice(n, size=k, replace=False)] = False
        rows.append(keep)
    full = target.value()
    values = full - target.scores_without(np.array(rows))
    return dict(zip(names, values[:len(names)])), float(values[len(names):].mean())


def sentiment_set(lm) -> list[dict]:
    rng = np.random.default_rng(1)
    rows = []
    texts = [json.loads(line)["text"] for line in DATA.read_text().splitlines() if line.strip()]
    for i, text in enumerate(texts):
        r = api.attribute(text, task="sentiment")
        target, _ = tasks.classifier(lm.model, lm.tokenizer, text, label=r["prediction"]["label"])
        drops, random_drop = top_k_drops(target, r["scores"], rng)
        rows.append({"r": r, "drops": drops, "random": random_drop})
        print(f"{i + 1}/{len(texts)} {r['seconds']:.1f}s most faithful {r['checks']['most_faithful']}", flush=True)
    return rows


def long_input_runs() -> list[tuple[str, dict]]:
    words = ("The hotel was close to the station, the staff were friendly and the breakfast was generous, "
             "but the room was small, the walls were thin and the air conditioning rattled all night long. ")
    text = words * 8
    out = []
    for task, kw in (("sentiment", {}), ("next_token", {"contrast": "bad"})):
        tok = hub.load(api.ROLES[task]).tokenizer
        ids = tok(text)["input_ids"]
        cut = tok.decode(ids[:128 - (2 if task == "sentiment" else 0)], skip_special_tokens=True)
        while len(tok(cut)["input_ids"]) > 128:
            cut = cut[:-5]
        try:
            out.append((task, api.attribute(cut, task=task, **kw)))
        except BudgetExceeded as exc:
            out.append((task, {"over_budget": str(exc)}))
        print(task, "128 tokens done", flush=True)
    return out


def report(rows: list[dict], long_runs) -> str:
    methods = rows[0]["r"]["methods"]
    n = len(rows)
    beat = {m: sum(row["drops"][m] > row["random"] for row in rows) for m in methods}
    chosen = [row["r"]["checks"]["most_faithful"] for row in rows]
    best_beat = sum(row["drops"][m] > row["random"] for row, m in zip(rows, chosen))
    gaps = [row["r"]["checks"]["completeness"]["relative_gap"] for row in rows
            if row["r"]["checks"]["completeness"]["relative_gap"] is not None]
    cost = {m: statistics.median(row["r"]["timing"][m] / row["r"]["timing"]["one_forward"] for row in rows)
            for m in methods}
    tokens = [len(row["r"]["tokens"]) for row in rows]
    lines = [
        "# Attributions (the Why tab) on the shipped sentiment test set", "",
        f"{platform.machine()}, {os.cpu_count()} cores (shared with other jobs), {THREADS} torch thread(s); {n} sentences "
        f"({min(tokens)}-{max(tokens)} scored tokens, median {statistics.median(tokens):.0f}); the offline sentiment "
        "classifier (MiniLM fine-tuned here); /attribute at its defaults (32 IG steps, 6 random orders for the "
        f"ranking; the decoder's defaults: 16 steps, 4 orders). 'Beats random': removing the method's top {K} tokens lowers p(predicted label) more than "
        f"removing {K} random tokens (mean of {FRESH_RANDOM} fresh random draws per sentence, not the orders "
        "the app ranked with).", "",
        "| method | beats random (top 3) | median drop, top 3 | cost / one forward (median) | times ranked most faithful |",
        "|---|---|---|---|---|",
    ]
    for m in methods:
        med = statistics.median(row["drops"][m] for row in rows)
        lines.append(f"| {api.WORDS[m]} | {beat[m]}/{n} ({100 * beat[m] / n:.0f}%) | {med:.3f} | {cost[m]:.1f}x | "
                     f"{chosen.count(m)} |")
    lines += [f"| random 3 tokens | - | {statistics.median(row['random'] for row in rows):.3f} | - | - |", "",
              f"**The method the app ranks most faithful on each sentence beats random on {best_beat}/{n} "
              f"({100 * best_beat / n:.0f}%)** (target >= 80%).", "",
              f"Integrated gradients' completeness gap at 32 steps: median {100 * statistics.median(gaps):.2f}%, "
              f"max {100 * max(gaps):.2f}%, under 5% on {sum(g < 0.05 for g in gaps)}/{len(gaps)} sentences.", "",
              f"Whole request (all methods + checks) per sentence: median "
              f"{statistics.median(row['r']['seconds'] for row in rows):.2f} s, one forward "
              f"{1000 * statistics.median(row['r']['timing']['one_forward'] for row in rows):.1f} ms.", "",
              f"## Defaults on a 128-token input (request budget {default_seconds():.0f} s)", "",
              "| task | tokens | seconds | one forward | IG | occlusion | checks | IG gap |", "|---|---|---|---|---|---|---|---|"]
    for task, r in long_runs:
        if "over_budget" in r:
            lines.append(f"| {task} | 128 | over budget | | | | | |")
            continue
        t, comp = r["timing"], r["checks"].get("completeness", {})
        gap = comp.get("relative_gap")
        lines.append(f"| {task} | {len(r['tokens'])} | {r['seconds']:.1f} | {t['one_forward']:.3f} | "
                     f"{t['integrated_gradients']:.1f} | {t['occlusion']:.1f} | {t['checks']:.1f} | "
                     f"{'-' if gap is None else f'{100 * gap:.1f}%'} |")
    return "\n".join(lines) + "\n"


def extra(lm) -> str:
    """`--extra`: IG's gap by steps on the 82 sentences, and the decoder's cost by prompt length."""
    from backend.attribution import methods as mth

    texts = [json.loads(line)["text"] for line in DATA.read_text().splitlines() if line.strip()]
    lines = ["", "## The decoder's next token at its defaults, by prompt length", "",
              "| tokens | seconds | one forward | gradient x input | IG | occlusion | rollout | checks |",
              "|---|---|---|---|---|---|---|---|"]
    dec = hub.load("decoder")
    words = "The hotel was close to the station and the staff were friendly, but the room was small. " * 12
    for n in (64, 128):
        prompt = dec.tokenizer.decode(dec.tokenizer(words)["input_ids"][:n])
        try:
            r = api.attribute(prompt, task="next_token")
        except BudgetExceeded:
            lines.append(f"| {n} | over budget | | | | | | |")
            continue
        t = r["timing"]
        lines.append(f"| {len(r['tokens'])} | {r['seconds']:.1f} | {t['one_forward']:.3f} | {t['gradient_x_input']:.1f} | "
                     f"{t['integrated_gradients']:.1f} | {t['occlusion']:.1f} | {t['attention_rollout']:.1f} | "
                     f"{t['checks']:.1f} |")
        print(lines[-1], flush=True)
    lines += ["", "## Integrated gradients' completeness gap by steps (the 82 sentences)", "",
             "| steps | median gap | max gap | under 5% | IG seconds (median) |", "|---|---|---|---|---|"]
    for steps in (64,):  # 32: the table above
        gaps, secs = [], []
        for text in texts:
            target, _ = tasks.classifier(lm.model, lm.tokenizer, text)
            t0 = time.perf_counter()
            gaps.append(mth.integrated_gradients(target, steps)[1]["relative_gap"])
            secs.append(time.perf_counter() - t0)
        lines.append(f"| {steps} | {100 * statistics.median(gaps):.2f}% | {100 * max(gaps):.2f}% | "
                     f"{sum(g < 0.05 for g in gaps)}/{len(gaps)} | {statistics.median(secs):.2f} |")
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def decoder_prefix() -> str:
    """`--decoder`: occlusion and the deletion check on the decoder with the prompt's cached prefix
    (what the app does) and without it (every removal recomputed whole, as before), on the same
    Target and scores; then /attribute at its defaults. Ratios are against one plain forward."""
    from backend.attribution import checks, methods as mth

    dec = hub.load("decoder")
    words = "The hotel was close to the station and the staff were friendly, but the room was small. " * 12
    lines = ["", "## The decoder's removals: the prompt's cached prefix reused, against recomputing each row", "",
             f"{THREADS} torch thread(s). Occlusion = one removal per token; deletion = the check's curves for the "
             "five methods and 4 random orders. Each cell: seconds (x one plain forward of the prompt).", "",
             "| tokens | one forward | occlusion, whole rows | occlusion, cached prefix | deletion, whole rows | "
             "deletion, cached prefix | max score difference | /attribute at defaults |", "|---|---|---|---|---|---|---|---|"]
    for n in (64, 128):
        prompt = dec.tokenizer.decode(dec.tokenizer(words)["input_ids"][:n])
        t0 = time.perf_counter()
        try:
            r = api.attribute(prompt, task="next_token")
            whole_request = f"{r['seconds']:.1f} s"
        except BudgetExceeded:
            r = api.attribute(prompt, task="next_token", methods=["gradient_x_input", "occlusion"], random_orders=4)
            whole_request = f"over budget ({time.perf_counter() - t0:.0f} s)"
        target, _ = tasks.next_token(dec.model, dec.tokenizer, prompt)
        scores = {m: np.asarray(v) for m, v in r["scores"].items()}
        fwd = min(_timed(target.value)[0] for _ in range(3))
        cached = target.prefix_score
        got = {}
        for name, scorer in (("whole", None), ("cached", cached)):
            target.prefix_score = scorer
            got[name] = (_timed(lambda: mth.occlusion(target)), _timed(lambda: checks.deletion(target, scores, 4)))
        diff = max(float(np.abs(got["whole"][0][1] - got["cached"][0][1]).max()),
                   max(float(np.abs(np.asarray(got["whole"][1][1]["curves"][m]) -
                                    np.asarray(got["cached"][1][1]["curves"][m])).max()) for m in scores))
        cell = lambda sec: f"{sec:.1f} s ({sec / fwd:.0f}x)"  # noqa: E731
        lines.append(f"| {len(target.ids)} | {1000 * fwd:.0f} ms | {cell(got['whole'][0][0])} | {cell(got['cached'][0][0])} | "
                     f"{cell(got['whole'][1][0])} | {cell(got['cached'][1][0])} | {diff:.1e} | {whole_request} |")
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    torch.set_num_threads(THREADS)
    if "--decoder" in sys.argv:
        t0 = time.perf_counter()
        added = decoder_prefix()
        with OUT.open("a") as f:
            f.write(added + f"\n`--decoder` wall time {time.perf_counter() - t0:.0f} s; load average "
                    f"{os.getloadavg()[0]:.1f} at the end.\n")
        print(added)
        return
    if "--extra" in sys.argv:
        t0 = time.perf_counter()
        added = extra(hub.load("sentiment"))
        with OUT.open("a") as f:
            f.write(added + f"\n`--extra` wall time {time.perf_counter() - t0:.0f} s; load average "
                    f"{os.getloadavg()[0]:.1f} at the end.\n")
        print(added)
        return
    lm = hub.load("sentiment")
    t0 = time.perf_counter()
    long_runs = long_input_runs()
    rows = sentiment_set(lm)
    text = report(rows, long_runs) + (f"\nBenchmark wall time {time.perf_counter() - t0:.0f} s; load average "
                                      f"{os.getloadavg()[0]:.1f} at the end.\n")
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
