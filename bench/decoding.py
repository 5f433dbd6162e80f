"""Benchmark: our instrumented generation (backend.decoding.decode) vs plain `model.generate`.

Same model, prompt, settings and seed in one run; runs alternate (plain, ours, plain, ours...)
and the median is reported, so machine noise hits both sides alike. Prints markdown tables and
writes them to bench/results/decoding.md.

    .venv/bin/python bench/decoding.py            # default, about 3 minutes on 2 CPU cores
    .venv/bin/python bench/decoding.py --full     # more repeats, plus output_scores memory measured
    .venv/bin/python bench/decoding.py --sections precision   # the playground's int8 vs fp32 only
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLAB_PROFILE", "local")

import torch  # noqa: E402

from backend import hub
from backend.engines.generation.generate import UNICORN, decode

STRATEGIES = [
    ("greedy", {"strategy": "greedy"}, {"do_sample": False}, 1.2),
    ("top-p 0.9", {"strategy": "sample", "top_p": 0.9, "seed": 0}, {"do_sample": True, "top_p": 0.9, "top_k": 0}, 1.2),
    ("top-k 50", {"strategy": "sample", "top_k": 50, "seed": 0}, {"do_sample": True, "top_k": 50}, None),
    ("temperature 0.7", {"strategy": "sample", "temperature": 0.7, "seed": 0},
     {"do_sample": True, "temperature": 0.7, "top_k": 0}, None),
    ("beam 4", {"strategy": "beam", "num_beams": 4}, {"do_sample": False, "num_beams": 4}, 1.3),
]


def vm_hwm_kb() -> int:
    """Peak resident memory of this process (kB), from /proc; 0 where unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_hwm() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


CPU: list[float] = []  # process CPU seconds of the last call, appended by plain()/ours()


def plain(lm, ids, kwargs, n, seed=0):
    torch.manual_seed(seed)
    c0, t0 = time.process_time(), time.perf_counter()
    with torch.inference_mode():
        out = lm.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                                pad_token_id=lm.tokenizer.eos_token_id, **kwargs)
    CPU.append(time.process_time() - c0)
    return time.perf_counter() - t0, out.shape[1] - ids.shape[1]


def ours(lm, prompt, settings, n):
    c0, t0 = time.process_time(), time.perf_counter()
    res = decode(lm.model, lm.tokenizer, prompt, {**settings, "max_new_tokens": n})
    CPU.append(time.process_time() - c0)
    return time.perf_counter() - t0, res


def precision_section(prompt: str, n: int, repeats: int) -> list[str]:
    """The playground's precision knob end to end (role-level `decoding.decode`): fp32 against the
    int8 copy, greedy, n tokens forced (EOS held back), runs alternating. The int8 total includes
    the one teacher-forced fp32 forward that gives the step table its second column."""
    from backend import decoding
    from backend.engines.compression import quantize

    lm = hub.load("decoder")
    t0 = time.perf_counter()
    quantize.int8_of(lm)
    built = time.perf_counter() - t0
    base = {"strategy": "greedy", "max_new_tokens": n, "min_new_tokens": n}
    for p in ("fp32", "int8"):  # warm-up
        decoding.decode(prompt, {**base, "max_new_tokens": 4, "min_new_tokens": 0, "precision": p})
    gen = {"fp32": [], "int8": []}
    total = {"fp32": [], "int8": []}
    rescore = []
    agree = []
    for _ in range(max(3, repeats)):
        out = {}
        for p in ("fp32", "int8"):
            t = time.perf_counter()
            out[p] = decoding.decode(prompt, {**base, "precision": p})
            total[p].append(time.perf_counter() - t)
            gen[p].append(out[p]["generate_seconds"])
        rescore.append(out["int8"]["precision"]["rescore_seconds"])
        a, b = out["fp32"]["outputs"][0]["token_ids"], out["int8"]["outputs"][0]["token_ids"]
        agree.append(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))
    med = {p: statistics.median(v) for p, v in gen.items()}
    tot = {p: statistics.median(v) for p, v in total.items()}
    lines = [
        "", f"## Precision: the playground's int8 vs fp32 ({n} greedy tokens, role-level `decoding.decode`, "
        f"median of {max(3, repeats)} alternating runs)", "",
        "| precision | generate (s) | tok/s (generate) | total (s) | tok/s (total) | speed-up vs fp32 (generate) | "
        "rescore by the other model (s) |",
        "|---|---|---|---|---|---|---|",
        f"| fp32 | {med['fp32']:.2f} | {n / med['fp32']:.1f} | {tot['fp32']:.2f} | {n / tot['fp32']:.1f} | 1.00x | - |",
        f"| int8 | {med['int8']:.2f} | {n / med['int8']:.1f} | {tot['int8']:.2f} | {n / tot['int8']:.1f} | "
        f"**{med['fp32'] / med['int8']:.2f}x** | {statistics.median(rescore):.2f} |",
        "",
        f"int8 copy built once in {built:.1f} s (cached, shared with the Efficiency tab). Greedy outputs identical "
        f"for the first {min(agree)} tokens in every run. 'total' is the whole request: the int8 one includes the "
        "one teacher-forced fp32 forward over the generated sequence that fills the step table's fp32 column.",
    ]
    print("\n".join(lines), flush=True)
    return lines


def strategy_rows(lm, ids, prompt: str, n: int, repeats: int) -> list[str]:
    """One row per strategy: ours against plain generate, same settings and seed, median of `repeats`."""
    lines = []
    for name, settings, kwargs, target in STRATEGIES:
        tp, tg, tt, cp, co = [], [], [], [], []
        for _ in range(repeats):
            t, n_plain = plain(lm, ids, kwargs, n, seed=settings.get("seed", 0))
            tp.append(t)
            cp.append(CPU[-1])
            t, res = ours(lm, prompt, settings, n)
            tt.append(t)
            co.append(CPU[-1])
            tg.append(res.generate_seconds)
        p, g, o = statistics.median(tp), statistics.median(tg), statistics.median(tt)
        ratio = o / p
        cpu_ratio = statistics.median(co) / statistics.median(cp)
        verdict = "" if target is None else f"<= {target}: {'OK' if min(ratio, cpu_ratio) <= target else 'MISSED'}"
        row = (f"| {name} | {p:.2f} | {g:.2f} | {o:.2f} | **{ratio:.2f}x** | **{cpu_ratio:.2f}x** | {verdict} | "
               f"{res.n_new_tokens} | {n_plain / p:.1f} | {res.n_new_tokens / o:.1f} |")
        lines.append(row)
        print(row, flush=True)
    return lines


def length_rows(lm, ids, prompt: str, full: bool) -> list[str]:
    """Time and the per-step record's memory as max_new_tokens grows (with --full: output_scores' memory)."""
    lines, tok = [], lm.tokenizer
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    for m in (32, 128, 512):
        reset_hwm()
        before = vm_hwm_kb()
        t, res = ours(lm, prompt, {"strategy": "greedy", "min_new_tokens": m}, m)
        grow = (vm_hwm_kb() - before) / 1024
        scores_mib = res.n_new_tokens * vocab * 4 / 2**20  # one fp32 [1, vocab] tensor per step
        row = (f"| {m} ({res.n_new_tokens} generated) | {t:.2f} | {res.n_new_tokens / t:.1f} | "
               f"{res.record_bytes / 1024:.1f} | {scores_mib:.1f} | {grow:.1f} |")
        lines.append(row)
        print(row, flush=True)
    if full:
        reset_hwm()
        before = vm_hwm_kb()
        with torch.inference_mode():
            out = lm.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=512, min_new_tokens=512,
                                    do_sample=False,
                                    output_scores=True, return_dict_in_generate=True,
                                    pad_token_id=tok.eos_token_id)
        held = sum(s.numel() * s.element_size() for s in out.scores) / 2**20
        row = (f"| 512 with plain `output_scores=True` | - | - | - | {held:.1f} (measured) | "
               f"{(vm_hwm_kb() - before) / 1024:.1f} |")
        lines.append(row)
        print(row, flush=True)
        del out
    return lines


def beam_rows(lm, ids, prompt: str) -> list[str]:
    """Time as num_beams grows, ours against plain, 32 new tokens."""
    lines = []
    for b in (1, 4, 8, 16):
        settings = {"strategy": "greedy"} if b == 1 else {"strategy": "beam", "num_beams": b}
        tp, _ = plain(lm, ids, {"do_sample": False, "num_beams": b}, 32)
        t, res = ours(lm, prompt, settings, 32)
        row = (f"| {b} | {tp:.2f} | {t:.2f} | {t / tp:.2f}x | {res.n_new_tokens / t:.1f} | "
               f"{res.record_bytes / 1024:.1f} |")
        lines.append(row)
        print(row, flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="5 repeats and the output_scores memory comparison")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    ap.add_argument("--sections", default="main,length,beams,precision",
                    help="comma list of main, length, beams, precision")
    args = ap.parse_args()
    repeats = args.repeats or (5 if args.full else 2)
    n = args.tokens
    sections = set(args.sections.split(","))
    torch.set_num_threads(args.threads or max(1, os.cpu_count() or 1))

    lm = hub.load("decoder")
    tok = lm.tokenizer
    prompt = UNICORN
    ids = torch.tensor([tok(prompt)["input_ids"]], device=lm.model.device)
    # warm up both paths once (first-call allocations, lazy kernels)
    plain(lm, ids, {"do_sample": False}, 4)
    ours(lm, prompt, {"strategy": "greedy"}, 4)

    lines = [
        f"# Decoding benchmark: instrumented `decode` vs plain `model.generate`",
        "",
        f"Model: {lm.checkpoint} ({lm.device}, {lm.describe().get('dtype', '')}); prompt: the book's unicorn prompt "
        f"({ids.shape[1]} tokens); torch {torch.__version__}, {torch.get_num_threads()} torch thread(s) on "
        f"{os.cpu_count()} cores, {platform.machine()}; "
        f"median of {repeats} alternating runs.",
        "",
        f"## {n} new tokens, identical settings and seed",
        "",
        "| strategy | plain generate (s) | ours: generate only (s) | ours: total (s) | ratio total/plain (wall) | "
        "ratio (process CPU time) | target | tokens | plain tok/s | ours tok/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    if "main" in sections:
        print("\n".join(lines), flush=True)
    if "main" in sections:
        lines += strategy_rows(lm, ids, prompt, n, repeats)

    sec = [] if "length" not in sections else ["", "## Time vs max_new_tokens (greedy, ours, EOS suppressed until max_new_tokens) and memory of the per-step record", "",
           "| max_new_tokens | ours total (s) | tok/s | record held (KiB) | output_scores would hold (MiB) | "
           "peak RSS growth in the run (MiB) |", "|---|---|---|---|---|---|"]
    print("\n".join(sec), flush=True)
    lines += sec
    if "length" in sections:
        lines += length_rows(lm, ids, prompt, args.full)

    sec = [] if "beams" not in sections else ["", "## Time vs num_beams (32 new tokens, ours vs plain)", "",
           "| num_beams | plain (s) | ours total (s) | ratio | ours tok/s | record held (KiB) |", "|---|---|---|---|---|---|"]
    print("\n".join(sec), flush=True)
    lines += sec
    if "beams" in sections:
        lines += beam_rows(lm, ids, prompt)

    if "precision" in sections:
        sec = precision_section(prompt, n, repeats)
        lines += sec

    lines += ["", "Ratios are ours/plain in the same run (the machine is noisy, about +-15%; on a shared box the "
              "process-CPU-time ratio is the steadier one). 'ours: total' includes "
              "building the step table, the beam tree and, for beam search, the one forward pass that scores the "
              "returned sequences. 'record held' is the device memory of the per-step record at the end of "
              "generation (top candidates only, plus one rolling step); 'output_scores would hold' is one "
              "vocabulary-sized fp32 tensor per step, what `generate(output_scores=True)` keeps."]
    out_dir = Path(__file__).resolve().parent / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    name = "decoding.md" if sections == {"main", "length", "beams", "precision"} else f"decoding-{'-'.join(sorted(sections))}.md"
    (out_dir / name).write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {out_dir / name}")


if __name__ == "__main__":
    main()
