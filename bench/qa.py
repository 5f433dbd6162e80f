"""QA on the `local` profile (span-decoding, backend.engines.qa.span_qa): quality and latency, one run.

  .venv/bin/python bench/qa.py            # TUNING, HELD_OUT, HELD_OUT_2, then HELD_OUT_3 (~130 questions)
  .venv/bin/python bench/qa.py --held-out # HELD_OUT_3 only

The check sets (tests/data/qa/, their card in its README.md) were written for this project: short news, science,
history and business contexts (~60-80 words, 4-5 sentences), answers that are names, numbers,
dates, places and short phrases, and questions the text does not answer. The settings
(calibration, demos, sentences read) were chosen on TUNING; the no-answer rule and margin on
TUNING and HELD_OUT (seen by then); the absent-topic-word rule (backend.engines.qa.question_terms)
on all three; HELD_OUT_3 (tests/data/qa/held_out_3.jsonl) was written afterwards by a writer who
had not seen the method, and is the held-out number. Through `tasks.qa`, the runner the tab calls, with the embedder ranking sentences
as the app does. Latency is per question, warm models, on this (shared, noisy) machine.
Writes bench/results/qa.md.
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
os.environ["TLAB_PROFILE"] = "local"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from backend import hub  # noqa: E402
from backend.engines.qa import span_qa  # noqa: E402
from backend.pipelines import tasks as P  # noqa: E402
from tests.helpers.qa_sets import grade, load  # noqa: E402

TUNING, HELD_OUT, HELD_OUT_2, HELD_OUT_3 = (load(name) for name in ("tuning", "held_out", "held_out_2", "held_out_3"))

OUT = Path(__file__).resolve().parent / "results" / "qa.md"


def run(lm, rank, cases) -> dict:
    rows, seconds, substring = [], [], 0
    for context, question, expected in cases:
        start = time.perf_counter()
        r = P.qa(lm, question, context, top_n=3, rank=rank)
        seconds.append(time.perf_counter() - start)
        substring += all(context[a["start"]:a["end"]] == a["answer"] for a in r["answers"])
        g = grade(context, expected, r)
        why = f": never mentions {', '.join(r['absent_terms'])}" if r.get("absent_terms") else ""
        rows.append((question, expected, f"(no answer{why})" if r["no_answer"] else r["answer"], g))
        print(f"{seconds[-1]:6.2f} s  {question[:50]:50s} -> {rows[-1][2]!r} (expected {expected!r})", flush=True)
    answerable = [g for *_, g in rows if g["answerable"]]
    unanswerable = [g for *_, g in rows if not g["answerable"]]
    return {
        "n": len(cases), "answerable": len(answerable), "unanswerable": len(unanswerable),
        "exact": sum(g["exact"] for g in answerable), "overlap": sum(g["overlap"] for g in answerable),
        "f1": sum(g["f1"] for g in answerable) / max(1, len(answerable)),
        "refused_wrongly": sum(g["refused"] for g in answerable),
        "refused": sum(g["refused"] for g in unanswerable), "substring": substring,
        "median_s": statistics.median(seconds), "p90_s": sorted(seconds)[int(0.9 * (len(seconds) - 1))],
        "max_s": max(seconds), "rows": rows,
    }


def table(name: str, m: dict) -> list[str]:
    a, u = m["answerable"], m["unanswerable"]
    return [f"| {name} | {m['overlap']}/{a} ({m['overlap'] / a:.0%}) | {m['exact']}/{a} | {m['f1']:.2f} | "
            f"{m['refused_wrongly']}/{a} | {m['refused']}/{u} ({m['refused'] / u:.0%}) | {m['substring']}/{m['n']} | "
            f"{m['median_s']:.1f} / {m['p90_s']:.1f} / {m['max_s']:.1f} |"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--held-out", action="store_true", help="only the held-out set (HELD_OUT_3)")
    args = ap.parse_args()
    start = time.perf_counter()
    lm, emb = hub.load("qa"), hub.load("embedder")
    loaded = time.perf_counter() - start
    rank = span_qa.embedding_rank(emb.model, emb.tokenizer)
    P.qa(lm, "Where?", "A warm-up sentence in Paris.", top_n=1, rank=rank)  # builds the demos' cache once
    load = os.getloadavg()[0]
    sets = {}
    if not args.held_out:
        sets = {"tuning": run(lm, rank, TUNING), "held-out (tuned on since)": run(lm, rank, HELD_OUT),
                "held-out 2 (tuned on since)": run(lm, rank, HELD_OUT_2)}
    sets["held-out 3 (blind)"] = run(lm, rank, HELD_OUT_3)
    lines = [
        "# QA on the `local` profile: copy-only span decoding (SmolLM2-135M-Instruct)",
        "",
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared with other jobs: noisy), "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; models loaded in {loaded:.1f} s.",
        f"No answer when log-sum-exp of the distinct spans' calibrated log-probs - (no-answer reply's log-prob - "
        f"its log-prob with the content-free question) <= {span_qa.DEFAULT_MARGIN} nats, or when a topic word of "
        "the question never occurs in the text (backend.engines.qa.question_terms).",
        f"Settings: calibration {span_qa.DEFAULT_CALIBRATION}, "
        f"{span_qa.STARTS} starts, answers up to {span_qa.MAX_ANSWER_TOKENS} tokens, the {span_qa.KEEP_SENTENCES} "
        "sentences closest to the question (all-MiniLM-L6-v2 cosine); "
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| set | answerable: right span (overlaps the expected) | exact | token F1 | answerable refused | "
        "unanswerable refused | answers = context[start:end] | seconds per question: median / p90 / max |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in sets.items():
        lines += table(name, m)
    lines += ["", "HELD_OUT_3 answers (question -> answer; expected):", ""]
    lines += [f"- {q} -> {got!r}; {exp!r}" for q, exp, got, _ in sets["held-out 3 (blind)"]["rows"]]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:14]))


if __name__ == "__main__":
    main()
