"""From scratch tab benchmark (issue "scratch"): tokenizer training time per MB, and the tiny
GPT's training loop against a plain PyTorch loop on the same model.

  .venv/bin/python bench/scratch.py            # ~3-5 min on a 2-core CPU
  .venv/bin/python bench/scratch.py --quick

1. Tokenizer training per MB. `/train_tokenizer` as the tab calls it (`scratch.train_tokenizer`:
   the library's training, the merges with their counts, the from-scratch BPE re-learning the
   same merges as a check, the replay timeline, the comparison with the app's tokenizers)
   against the library's trainer alone (`tokenizers`, same settings), on the shipped corpora,
   both per MB of text. The whole tab costs more than the library because it does more: the
   ratio says how much more.
2. Tiny GPT steps per second (target <= 1.1x). `tiny_gpt.train_steps` (chunked GPU tasks,
   progress, Stop and the budget checked between chunks, one torch thread) vs a plain loop
   over the *same batches* with the same model init, AdamW, gradient clipping and
   learning-rate schedule, also on one thread. Validation is left to the end in both (our
   loop's step-0 and last evaluations are timed and taken out), so the ratio is the loop's.
   Rounds alternate which runs first; the median of the rounds is reported.

Writes bench/results/scratch.md. Ratios, not absolute times, are the point: the machine is shared.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from backend.engines.scratch import corpora, tiny_gpt  # noqa: E402
from backend.engines.scratch import train as T  # noqa: E402
from backend.scratch import api as S  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "scratch.md"


def tokenizer_rows(repeats: int) -> list[str]:
    rows = []
    S.train_tokenizer("BPE", 300, "tokenizers")  # loads the app's tokenizers it compares with, once
    for corpus in ("tokenizers", "glossary"):
        what, body = corpora.corpus_text(corpus)
        mb = len(body.encode("utf-8")) / 1e6
        for algorithm, vocab in (("BPE", 1000), ("WordPiece", 1000), ("Unigram", 1000)):
            ours, lib = [], []
            for r in range(repeats):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                for which in order:
                    t = time.perf_counter()
                    if which == 0:
                        S.train_tokenizer(algorithm, vocab, corpus)
                        ours.append(time.perf_counter() - t)
                    else:
                        T.train_library(algorithm, body, vocab)
                        lib.append(time.perf_counter() - t)
            o, l = statistics.median(ours), statistics.median(lib)
            rows.append(f"| {corpus} ({mb:.3f} MB) | {algorithm} {vocab} | {l / mb:.2f} | {o / mb:.2f} | "
                        f"{o / l:.1f}x |")
            print(rows[-1], flush=True)
    return rows


def plain_loop(model, data, batch, seed, lrs) -> float:
    """The loop a learner would write: draw a batch, AdamW, clip at 1.0, the same learning rates
    (and the same batches: the same generator); one thread."""
    opt = torch.optim.AdamW(model.parameters(), lr=lrs[0], weight_decay=0.01)
    model.train()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        t = time.perf_counter()
        gen = torch.Generator().manual_seed(seed)
        for lr in lrs:
            x, y = data.windows(data.train, batch, gen)
            for g in opt.param_groups:
                g["lr"] = lr
            logits = model(input_ids=x).logits
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            float(loss.detach())
        return time.perf_counter() - t
    finally:
        torch.set_num_threads(before)


def gpt_rows(steps: int, rounds: int) -> tuple[list[str], dict]:
    _, body = corpora.corpus_text("glossary")
    tok = tiny_gpt.byte_tokenizer()
    s = dict(layers=3, heads=4, width=96, context=64, batch=16, lr=3e-3, seed=0)
    data = tiny_gpt.Data.split(tiny_gpt.encode(tok, body), s["context"])
    settings = tiny_gpt.Settings(steps=steps, batch=s["batch"], learning_rate=s["lr"], eval_every=steps,
                                 temperature=0.0, seed=s["seed"], report_every=10)
    factor = tiny_gpt.schedule(steps)
    lrs = [s["lr"] * factor(i) for i in range(steps)]
    ours, plain, losses = [], [], {}
    for r in range(rounds):
        for which in ([0, 1] if r % 2 == 0 else [1, 0]):
            model = tiny_gpt.build_model(256, s["layers"], s["heads"], s["width"], s["context"], s["seed"])
            if which == 0:
                out = tiny_gpt.Outcome()
                t = time.perf_counter()
                for _ in tiny_gpt.train_steps(model, tok, data, settings, outcome=out):
                    pass
                total = time.perf_counter() - t
                ours.append(total - sum(e["seconds"] for e in out.evals))
                losses["ours"] = out.losses
            else:
                plain.append(plain_loop(model, data, s["batch"], s["seed"], lrs))
    o, p = statistics.median(ours), statistics.median(plain)
    params = tiny_gpt.param_count(model)
    rows = [f"| {params:,} ({s['layers']} layers, {s['heads']} heads, width {s['width']}, context {s['context']}, "
            f"batch {s['batch']}) | {steps} | {steps / p:.1f} | {steps / o:.1f} | **{o / p:.2f}x** | "
            f"{', '.join(f'{v / steps * 1000:.0f}' for v in ours)} / {', '.join(f'{v / steps * 1000:.0f}' for v in plain)} |"]
    print(rows[-1], flush=True)
    return rows, {"last_loss": losses["ours"][-1] if losses else math.nan}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    tok_rows = tokenizer_rows(1 if args.quick else 3)
    g_rows, info = gpt_rows(60 if args.quick else 200, 2 if args.quick else 4)
    lines = [
        "# From scratch: tokenizer training per MB, tiny-GPT loop vs a plain PyTorch loop",
        "",
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared with other jobs: noisy), "
        f"torch {torch.__version__}; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. "
        "`bench/scratch.py`" + (" --quick" if args.quick else "") + ".",
        "",
        "## Tokenizer training, seconds per MB of text (median of the runs)",
        "",
        "`/train_tokenizer` does the library's training and then everything the tab shows: the merges with their "
        "counts, the from-scratch BPE re-learning them as a check, the replay, the comparison with the app's "
        "tokenizers. WordPiece and Unigram also train a BPE for the from-scratch check.",
        "",
        "| corpus | algorithm, vocabulary | library alone, s/MB | the tab's /train_tokenizer, s/MB | ratio |",
        "|---|---|---|---|---|",
        *tok_rows,
        "",
        "## Tiny GPT: steps per second, `tiny_gpt.train_steps` vs a plain loop (target <= 1.1x)",
        "",
        "Same model init, same batches, AdamW, clipping and schedule, one torch thread each; evaluations taken out. "
        "Last column: each round's milliseconds per step, ours / plain.",
        "",
        "| parameters | steps | plain loop, steps/s | ours, steps/s | ours / plain (time) | ms per step by round |",
        "|---|---|---|---|---|---|",
        *g_rows,
        "",
        f"Final training loss of our run: {info['last_loss']}.",
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
