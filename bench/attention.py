"""Attention tab benchmark: bertviz view size and build time vs token count, ours vs bertviz's own.

Ours: `backend.attention.views.head_view_html` / `model_view_html` (libraries inlined, attention as
base64 uint16, offline and escaped). Plain library: `bertviz.head_view/model_view(...,
html_action="return")` on the same tensors (CDN script tags, full-precision JSON; it would
still need the ~0.4 MB of libraries from the network). Also: the model forward with
attentions (ours through `compute_attention` vs a plain `model(..., output_attentions=True)`),
and the from-scratch check of every layer and head.

    .venv/bin/python bench/attention.py            # encoder 16/32/64/96 tokens, decoder 64
    .venv/bin/python bench/attention.py --full     # + 128/256 tokens (bertviz only as a baseline)

Writes the table to bench/results/attention.md. Target: encoder, 64 tokens, head view HTML
< 1.5 MB built in < 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from backend import hub
from backend.engines.attention import extract as A
from backend.engines.attention import math as am
from backend.attention import views as V  # noqa: E402

PARAGRAPH = (
    "Time flies like an arrow; fruit flies like a banana. The transformer reads every token at once "
    "and lets each one look at the others through attention, weighting them by how well a query "
    "matches a key. Encoders look both ways, decoders only look back, and position is added so that "
    "word order still matters to a model that otherwise sees a set of vectors. "
)


def text_with_tokens(tok, n: int, causal: bool) -> str:
    """A text that tokenises to exactly n tokens (special tokens included)."""
    ids = tok(PARAGRAPH * 20, add_special_tokens=False)["input_ids"]
    extra = len(tok("a")["input_ids"]) - len(tok("a", add_special_tokens=False)["input_ids"])
    for k in range(n - extra, 0, -1):
        text = tok.decode(ids[:k])
        if len(tok(text)["input_ids"]) <= n:
            return text
    return "a"


def best(fn, repeat: int = 3):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def bertviz_html(view: str, att, tokens, b_start):
    from bertviz import head_view, model_view

    tensors = [torch.from_numpy(att[i : i + 1]) for i in range(att.shape[0])]
    fn = head_view if view == "head" else model_view
    return fn(tensors, tokens, sentence_b_start=b_start, html_action="return").data


def row(lm, n: int, with_views: bool = True) -> dict:
    causal = am.is_causal(lm.model)
    text = text_with_tokens(lm.tokenizer, n, causal)
    enc = A.encode(lm.tokenizer, text, causal=causal, max_tokens=10_000)
    inputs = enc.inputs
    plain_s, _ = best(lambda: lm.model(**inputs, output_attentions=True), repeat=5)
    ours_s, result = best(repeat=5, fn=lambda: A.compute_attention(lm.model, lm.tokenizer, text) if len(enc.token_ids) <= A.MAX_TOKENS
                          else _raw(lm, enc))
    out = {"role": lm.role, "tokens": len(enc.token_ids), "plain_fwd_ms": plain_s * 1e3, "ours_fwd_ms": ours_s * 1e3}
    check_s, table = best(lambda: am.compare_all_layers(lm.model, inputs), repeat=1)
    out["check_ms"] = check_s * 1e3
    out["max_diff"] = max(max(r) for r in table)
    if with_views:
        att, toks, b = result.attention, result.tokens, result.sentence_b_start
        for view in ("head", "model"):
            s, html = best(lambda: V.iframe(V.render_view(view, att, toks, b)))
            bs, bhtml = best(lambda: bertviz_html(view, att, toks, b), repeat=1)
            out[f"{view}_ours_mb"] = len(html.encode()) / 1e6
            out[f"{view}_ours_s"] = s
            out[f"{view}_bertviz_mb"] = len(bhtml.encode()) / 1e6
            out[f"{view}_bertviz_s"] = bs
    return out


def _raw(lm, enc):
    attentions, _ = am.run_model(lm.model, enc.inputs)
    att = torch.stack([a[0] for a in attentions]).numpy()
    return A.AttentionResult(enc.tokens, enc.token_ids, enc.special, None, att, am.is_causal(lm.model), "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="also 128 and 256 tokens")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    enc = hub.load("encoder")
    dec = hub.load("decoder")
    sizes = [16, 32, 64, 96] + ([128, 256] if args.full else [])
    rows = [row(enc, n) for n in sizes] + [row(dec, 64)]
    if args.full:
        rows.append(row(dec, 96))
    header = ("| model | tokens | forward plain / ours (ms) | from-scratch check, all layers x heads (ms) | max abs diff "
              "| head view ours: MB, s | bertviz head_view: MB, s | size ratio | model view ours: MB, s "
              "| bertviz model_view: MB, s | size ratio |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for r in rows:
        lines.append(
            f"| {r['role']} | {r['tokens']} | {r['plain_fwd_ms']:.0f} / {r['ours_fwd_ms']:.0f} "
            f"| {r['check_ms']:.0f} | {r['max_diff']:.1e} "
            f"| {r['head_ours_mb']:.2f}, {r['head_ours_s']:.3f} | {r['head_bertviz_mb']:.2f}, {r['head_bertviz_s']:.3f} "
            f"| {r['head_bertviz_mb'] / r['head_ours_mb']:.1f}x "
            f"| {r['model_ours_mb']:.2f}, {r['model_ours_s']:.3f} | {r['model_bertviz_mb']:.2f}, {r['model_bertviz_s']:.3f} "
            f"| {r['model_bertviz_mb'] / r['model_ours_mb']:.1f}x |"
        )
    enc64 = next(r for r in rows if r["role"] == "encoder" and r["tokens"] == 64)
    verdict = (f"\nTarget (encoder, 64 tokens, head view < 1.5 MB built < 1 s): {enc64['head_ours_mb']:.2f} MB in "
               f"{enc64['head_ours_s']:.3f} s -> {'met' if enc64['head_ours_mb'] < 1.5 and enc64['head_ours_s'] < 1 else 'NOT met'}."
               "\nOur documents include ~0.41 MB of inlined require.js + d3 + jQuery and need no network; "
               "bertviz's load them from a CDN (not counted in its size). bertviz's pair mode repeats the "
               "attention 5 times (All, A->A, B->B, A->B, B->A); ours sends it once and slices in the browser.")
    table = "\n".join(lines) + "\n" + verdict + "\n"
    print(table)
    out = Path(__file__).resolve().parent / "results" / "attention.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Attention views: size and build time vs tokens (2-core CPU)\n\n" + table)


if __name__ == "__main__":
    main()
