"""The Efficiency tab (the book's chapter 8): the models as served (fp32) against int8 copies.

One button runs `backend.efficiency.efficiency`; this module only formats its plain result:
tables, the latency-against-quality scatters (marker area = model size), the per-prompt
greedy comparison, and the model that served it. `/efficiency` is a public API (the first
output is the JSON result).
"""

from __future__ import annotations

import gradio as gr

from backend.efficiency.contracts import CONTRACTS
from backend import efficiency
from components.efficiency import compress_ui, plots
from components.shell import code_view, links, runs
from components.shell.badge import model_time
from components.shell import LONG_LANE, Checkbox, Slider, error_box, md_text, model_badge, raw_json
from components.shell.endpoint import Endpoint, Link, Runs, declare

# Key columns first (speed and quality), sizes after; short headers, explained in the table labels.
DECODER_HEADERS = ["model", "tok/s", "perplexity", "same greedy", "memory MB", "disk MB"]
DECODER_LABEL = ("Decoder: tok/s = greedy tokens per second (median); perplexity on the shipped texts; same greedy = "
                 "prompts whose greedy tokens equal fp32's")
ENCODER_HEADERS = ["model", "ms/text", "same label", "memory MB", "disk MB"]
ENCODER_LABEL = ("Encoder (embedding-similarity classifier): ms/text = median latency; same label = labels equal "
                 "to fp32's")
PROMPT_HEADERS = ["diverges at", "prompt", "fp32 greedy", "int8 greedy"]
PROMPT_WIDTHS = ["12%", "22%", "33%", "33%"]

INTRO = (
    "### Efficiency: fewer bytes per token\nDecoding on a CPU is bound by memory bandwidth: each new token "
    "reads every weight once. The book's chapter 8 shrinks the weights with **dynamic quantization**: each "
    "Linear layer's weights stored as int8 (one scale per output row), activations quantized on the fly. "
    "Here the served **fp32** models are compared with their **int8** copies (built once, the originals "
    "untouched): size, greedy speed, perplexity on shipped texts, and how often greedy decoding still "
    "picks the very same tokens. Fewer prompts and texts run faster; the benchmark runs all 20."
)


def _pct(share) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def decoder_rows(dec: dict) -> list[list]:
    n = dec["agreement"]["new_tokens"]
    return [[r["name"], r["tokens_per_s"], r["perplexity"], f"{_pct(r['agreement'])} ({n} tokens)",
             r["memory_mb"], r["disk_mb"]] for r in dec["rows"]]


def encoder_rows(enc: dict) -> list[list]:
    return [[r["name"], r["ms_per_text"], _pct(r["agreement"]), r["memory_mb"], r["disk_mb"]] for r in enc["rows"]]


def prompt_rows(dec: dict) -> list[list]:
    return [["identical" if p["first_divergence"] is None else f"token {p['first_divergence']}", p["prompt"],
             p["fp32"], p["int8"]] for p in dec["prompts"]]


def summary_md(r: dict) -> str:
    dec, enc = r["decoder"], r["encoder"]
    a = dec["agreement"]
    same_all = a[f"first_{a['new_tokens']}"]
    lines = [
        f"**Decoder** int8 / fp32: **{dec['speedup']:.2f}x** greedy tok/s · memory **{dec['memory_ratio']:.2f}x** · "
        f"perplexity **{dec['perplexity_ratio']:.3f}x** ({dec['perplexity_tokens']} tokens) · greedy outputs identical on "
        f"the first 8 tokens for **{a['first_8']}/{a['of']}** prompts, on the first {a['new_tokens']} for "
        f"**{same_all}/{a['of']}**"
        + ("" if a["earliest_divergence"] is None else f" (earliest divergence at token {a['earliest_divergence']})"),
    ]
    if enc:
        t = enc["tasks"]
        lines.append(
            f"**Encoder** int8 / fp32: **{enc['speedup']:.2f}x** faster per text · memory **{enc['memory_ratio']:.2f}x** · "
            f"same label: sentiment {t['sentiment']['same_label']}/{t['sentiment']['items']} sentences, topic "
            f"{t['topic']['same_label']}/{t['topic']['items']} texts (max cosine change {max(x['max_abs_cosine_diff'] for x in t.values()):.4f})")
    built = dec["int8_built_s"] + (enc["int8_built_s"] if enc else 0)
    if built:
        lines.append(f"The int8 copies were built for this run ({built:.1f} s, once per process).")
    lines.append(f"This run: {model_time(r['seconds'])} (fp32 on {md_text(dec['model']['device'])}, int8 on cpu). Timings are "
                 "medians of interleaved runs (fp32, int8, fp32, ...) on a machine that may be busy: compare ratios.")
    return "\n\n".join(lines)


def badges(r: dict) -> str:
    out = ["fp32: " + model_badge(r["decoder"]["model"]), "int8: " + md_text(r["decoder"]["int8_model"]["note"])]
    if r["encoder"]:
        out.append("Encoder fp32: " + model_badge(r["encoder"]["model"]))
    return "\n\n".join(out)


def run_efficiency(prompts, texts, new_tokens, encoder, progress=gr.Progress()):
    """/efficiency: fp32 vs int8 for the decoder (and the encoder): sizes, speed, perplexity, agreement."""
    r = efficiency.efficiency(prompts, texts, new_tokens, encoder, progress=progress)
    enc = r["encoder"]
    return (
        r,
        badges(r),
        summary_md(r),
        decoder_rows(r["decoder"]),
        plots.decoder_scatter(r["decoder"]),
        encoder_rows(enc) if enc else [],
        plots.encoder_scatter(enc) if enc else plots.empty_figure("Encoder comparison not run."),
        prompt_rows(r["decoder"]),
    )


def build() -> None:
    with gr.Column(elem_id="efficiency-panel"):
        gr.Markdown(INTRO)
        with gr.Row():
            prompts = Slider(1, efficiency.MAX_ITEMS, value=efficiency.DEFAULT_PROMPTS, step=1,
                             label="prompts for greedy agreement and speed", elem_id="efficiency-prompts")
            texts = Slider(1, efficiency.MAX_ITEMS, value=efficiency.DEFAULT_TEXTS, step=1,
                           label="texts for perplexity (and the encoder)", elem_id="efficiency-texts")
            new_tokens = Slider(efficiency.AGREE_SHORT, 64, value=efficiency.DEFAULT_NEW_TOKENS, step=1,
                                label="greedy tokens per prompt")
            encoder = Checkbox(label="also compare the encoder (classification)", value=True)
        run = gr.Button("Compare fp32 and int8", variant="primary", elem_id="efficiency-run")
        box = error_box("efficiency-error")
        link_bar = links.bar("efficiency")  # minutes of work: a link restores the settings only
        badge = gr.Markdown(elem_id="efficiency-badge")
        summary = gr.Markdown(elem_id="efficiency-summary")
        with gr.Row():
            dec_table = gr.Dataframe(headers=DECODER_HEADERS, label=DECODER_LABEL, interactive=False, wrap=True,
                                     elem_id="efficiency-decoder-table")
            dec_plot = gr.Plot(label="Decoder: latency against perplexity (marker area = size)",
                               elem_id="efficiency-decoder-plot")
        with gr.Row():
            enc_table = gr.Dataframe(headers=ENCODER_HEADERS, label=ENCODER_LABEL,
                                     interactive=False, wrap=True, elem_id="efficiency-encoder-table")
            enc_plot = gr.Plot(label="Encoder: latency against agreement (marker area = size)",
                               elem_id="efficiency-encoder-plot")
        prompt_table = gr.Dataframe(headers=PROMPT_HEADERS, label="Greedy outputs per prompt", interactive=False,
                                    wrap=True, column_widths=PROMPT_WIDTHS, max_height=420,
                                    elem_id="efficiency-prompts-table")
        out_json = raw_json("Raw result (JSON: what /efficiency returns)")
        code = code_view.view("efficiency")  # "The same in Python", under the raw result
        outputs = [out_json, badge, summary, dec_table, dec_plot, enc_table, enc_plot, prompt_table]
        declare(Endpoint(
            "efficiency", run_efficiency, {"prompts": prompts, "texts": texts, "new_tokens": new_tokens,
                                           "encoder": encoder}, outputs, trigger=run, lane=LONG_LANE,
            options={"show_progress_on": [summary]},  # one progress bar, where the result's first line appears
            errors=box, result=out_json, code=code, link=Link("efficiency", link_bar),
            runs=Runs(runs.panel("efficiency"), [badge, summary, dec_table, enc_table]), contract=CONTRACTS["efficiency"]))
    compress_ui.build()  # the chapter's whole benchmark: distil, quantize, ONNX Runtime, prune
