"""Chapter 4's models on a check set written blind (bench/data/multilingual_ner_blind.jsonl: 140 sentences
in German, French, Italian and English, written by a helper who saw neither the method nor the training
data). Entity F1 (strict spans, `backend/engines/ner/metrics.py`, checked identical to seqeval) per run and
language, with per-type F1. Measured once; the set is never used to train or tune. Writes
bench/results/multilingual_blind.md.

    .venv/bin/python bench/multilingual_blind.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TLAB_PROFILE", "local")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "multilingual_ner_blind.jsonl"
LANGS = ("de", "fr", "it", "en")


def main() -> None:
    from backend import hub
    from backend.engines.ner import languages as ner_languages, metrics as ner_metrics, transfer as ner_transfer
    from backend.multilingual import api

    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    base = hub.load("multilingual")
    labels = ner_languages.labels()
    out = ["# Chapter 4 on a blind check set (bench/multilingual_blind.py)", "",
           f"{len(rows)} sentences written blind (bench/data/multilingual_ner_blind.md), tagged by the default "
           "run's two models (built at set-up); entity F1 with strict spans.", "",
           "| trained on | " + " | ".join(ner_languages.LANGUAGE_NAMES[l] for l in LANGS) + " | all | PER | ORG | LOC |",
           "|---|" + "---|" * (len(LANGS) + 4)]
    t0 = time.perf_counter()
    for run, name in api.RUN_NAMES.items():
        model = api._model(run, base)
        gold, pred, cells = [], [], []
        for lang in LANGS:
            part = [r for r in rows if r["lang"] == lang]
            tags = [p["tags"] for p in ner_transfer.predict(model, base.tokenizer, [r["tokens"] for r in part], labels)]
            g = [r["tags"] for r in part]
            cells.append(f"{ner_metrics.f1(g, tags):.3f}")
            gold += g
            pred += tags
        rep = ner_metrics.report(gold, pred)
        types = [f"{rep['per_type'].get(t, {}).get('f1', 0.0):.3f}" for t in ("PER", "ORG", "LOC")]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {ner_metrics.f1(gold, pred):.3f} | " + " | ".join(types) + " |")
    out += ["", f"Tagging took {time.perf_counter() - t0:.1f} s on this box.",
            "Target of the held-out check: entity F1 >= 0.6 on new German, French and Italian sentences "
            "from the multilingual model."]
    (ROOT / "bench" / "results" / "multilingual_blind.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
