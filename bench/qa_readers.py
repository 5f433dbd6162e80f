"""QA on the `local` profile: the reader trained here (chapter 7) against copy-only span decoding, one run.

  .venv/bin/python bench/qa_readers.py           # the blind set HELD_OUT_4 (tests/data/qa/held_out_4.jsonl)
  .venv/bin/python bench/qa_readers.py --dev     # TUNING + HELD_OUT + HELD_OUT_2 + HELD_OUT_3 (seen before)

Both through `tasks.qa`, the runner the Pipelines tab calls (span decoding with the embedder ranking
sentences, as the app does), warm models, one question at a time. Per method: has-answer exact match
and token F1 (the SQuAD 2.0 script's normalisation, backend.engines.qa.squad_metrics), right answers
(token F1 >= 0.5), wrong answers (an answer with F1 < 0.5 to an answerable question, or any answer to
an unanswerable one), no-answer accuracy, whether every answer is context[start:end], and seconds per
question. Appends a section to bench/results/qa.md (earlier runs are kept above it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TLAB_PROFILE"] = "local"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from backend import hub  # noqa: E402
from backend.engines.qa import span_qa, squad_metrics  # noqa: E402
from backend.pipelines import tasks as P  # noqa: E402
from backend.runtime import config  # noqa: E402
from tests.helpers import qa_sets  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "qa.md"


def readers() -> dict:
    """name -> (LoadedModel-like, rank) for both local methods, whichever the profile serves."""
    emb = hub.load("embedder")
    served = hub.load("qa")
    out = {}
    if served.method == config.METHOD_FINETUNED:
        out["reader (fine-tuned here)"] = (served, None)
    else:
        from backend.hub import reader_builder

        model, tok, meta, _ = reader_builder.serving_model(emb, hub.get_hub().resolve("embedder").location, "cpu",
                                                           torch.float32)
        out["reader (fine-tuned here)"] = (replace(served, model=model, tokenizer=tok, method=config.METHOD_FINETUNED,
                                                   extra=meta), None)
    dec = served if served.method == config.METHOD_SPAN else replace(hub.load("decoder"), method=config.METHOD_SPAN)
    out["span decoding (SmolLM2)"] = (dec, span_qa.embedding_rank(emb.model, emb.tokenizer))
    return out


def run(lm, rank, cases) -> dict:
    rows, secs, exact_slices = [], [], 0
    for context, question, expected in cases:
        start = time.perf_counter()
        r = P.qa(lm, question, context, top_n=3, rank=rank)
        secs.append(time.perf_counter() - start)
        exact_slices += all(context[a["start"]:a["end"]] == a["answer"] for a in r["answers"])
        pred = "" if r["no_answer"] or not r["answers"] else r["answers"][0]["answer"]
        em, f1 = squad_metrics.score([expected] if expected else [], pred)
        rows.append({"q": question, "expected": expected, "pred": pred, "em": em, "f1": f1})
    has = [x for x in rows if x["expected"]]
    no = [x for x in rows if not x["expected"]]
    return {"n": len(rows), "has": len(has), "no": len(no),
            "has_em": sum(x["em"] for x in has) / max(1, len(has)), "has_f1": sum(x["f1"] for x in has) / max(1, len(has)),
            "right": sum(x["pred"] != "" and x["f1"] >= 0.5 for x in has),
            "wrong": sum(x["pred"] != "" and x["f1"] < 0.5 for x in has) + sum(x["pred"] != "" for x in no),
            "refused_answerable": sum(x["pred"] == "" for x in has), "refused": sum(x["pred"] == "" for x in no),
            "slices": exact_slices, "median_s": statistics.median(secs), "p90_s": sorted(secs)[int(0.9 * (len(secs) - 1))],
            "rows": rows}


def table_row(name: str, m: dict) -> str:
    return (f"| {name} | {m['n']} ({m['has']} + {m['no']}) | {100 * m['has_em']:.1f} / {100 * m['has_f1']:.1f} | "
            f"{m['right']}/{m['has']} ({m['right'] / max(1, m['has']):.0%}) | {m['wrong']}/{m['n']} "
            f"({m['wrong'] / max(1, m['n']):.0%}) | {m['refused']}/{m['no']} ({m['refused'] / max(1, m['no']):.0%}) | "
            f"{m['refused_answerable']}/{m['has']} | {m['slices']}/{m['n']} | {m['median_s']:.3f} / {m['p90_s']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", action="store_true", help="the earlier (no longer blind) sets instead of HELD_OUT_4")
    ap.add_argument("--reader-only", action="store_true",
                    help="time the reader alone (span decoding's ~3 s a question is already measured above)")
    args = ap.parse_args()
    if args.dev:
        cases = [case for set_name in ("tuning", "held_out", "held_out_2", "held_out_3") for case in qa_sets.load(set_name)]
        name = "TUNING + HELD_OUT + HELD_OUT_2 + HELD_OUT_3 (seen)"
    else:
        cases, name = qa_sets.load("held_out_4"), "HELD_OUT_4 (blind, measured once)"
    methods = readers()
    if args.reader_only:
        methods = dict(list(methods.items())[:1])
    for lm, rank in methods.values():  # warm-up: the demos' cache, first forwards
        P.qa(lm, "Where?", "A warm-up sentence in Paris.", top_n=1, rank=rank)
    load = os.getloadavg()[0]
    results = {k: run(lm, rank, cases) for k, (lm, rank) in methods.items()}
    served = hub.get_hub().resolve("qa").method
    lines = ["", f"## {time.strftime('%Y-%m-%d')}: the reader trained here vs span decoding, on {name}", "",
             f"{os.cpu_count()} cores shared with other jobs (load {load:.1f} at the start, {os.getloadavg()[0]:.1f} "
             f"at the end), torch {torch.__version__}, {torch.get_num_threads()} threads; the `local` profile's "
             f"`qa` role serves: {config.method_name(served)}.", "",
             "| method | questions (answerable + not) | has-answer EM / F1 | right (F1 >= 0.5) | wrong answers | "
             "no-answer accuracy | answerable refused | answers = context[start:end] | seconds: median / p90 |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [table_row(k, m) for k, m in results.items()]
    names = list(results)
    lines += ["", f"Answers (question -> {' | '.join(n.split(' (')[0] for n in names)}; expected):", ""]
    for i, row in enumerate(results[names[0]]["rows"]):
        preds = " | ".join(repr(results[n]["rows"][i]["pred"] or "(no answer)") for n in names)
        lines.append(f"- {row['q']} -> {preds}; {row['expected']!r}")
    with open(OUT, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:10 + len(results)]))


if __name__ == "__main__":
    main()
