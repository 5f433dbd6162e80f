"""From scratch tab, chapter 11: the cost of attention on long texts, measured here, and the sparse
and linear attentions that avoid it, computed by hand on the packaged model's own queries and keys.
Then, said plainly, which of the chapter's models (vision, audio, tables) this app cannot run."""

from __future__ import annotations

import gradio as gr

from backend.scratch.contracts import CONTRACTS
from backend.scratch import attention_cost_api as api
from components import shell as common
from components.shell import SHORT_LANE, Dropdown, Number, Radio, Slider, Textbox, error_box, md_text, raw_json
from components.shell.endpoint import Endpoint, declare
from components.scratch.ch11_plots import cost_figure, errors_figure, fmt_ms, patterns_figure

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
ROLES = [("Encoder (all-MiniLM-L6-v2: 12 heads x 32)", "encoder"), ("Decoder (SmolLM2-135M: 9 heads x 64)", "decoder")]
INTRO = (
    "### Chapter 11: the cost of attention on long texts\n"
    "Every token's query is scored against every key: T x T numbers per head, so twice the text costs four times "
    "the work, and attention written out holds all of them at once. **Measure** one attention layer of the "
    f"packaged model at {api.MIN_TOKENS} to {api.LIVE_MAX_TOKENS:,} tokens (bench/attention_cost.py goes to 4,096), "
    "four ways: written out, torch's "
    "fused kernel (same numbers, no T x T kept), a **sliding window** (each token sees its neighbours) and "
    "**linear attention** (no T x T at all).")
SPARSE_INTRO = (
    "**Sparse and linear attention on the model's own queries and keys.** The model's attention recomputed "
    "from its weights, then three cheaper attentions on the same q, k, v: a sliding window; BigBird's "
    "block-sparse pattern (a window of blocks, a few global tokens, random blocks); and linear attention "
    "(the softmax replaced by elu(q)+1 · elu(k)+1). How far each output lands from full attention's, for every "
    "layer and head, is the price of the saving.")
UNAVAILABLE = (
    "**Models that see, hear and read tables (not here).** The chapter's ViT and DeiT (images), wav2vec 2.0 and "
    "Whisper (speech), TAPAS (tables) and CLIP (images with text) all need weights from the Hugging Face Hub, which "
    "this app cannot reach offline. Unlike the encoder and decoder used here, no maintained Python package ships "
    "their weights for transformers to load: the packages on the Python package index that wrap these models "
    "(checked by name) name no bundled weights that transformers reads. So this app does not run them; on a "
    "machine that reaches the Hub, the book's notebook does.")
COST_HEADERS = ["tokens", "full (ms)", "fused kernel (ms)", "sliding window (ms)", "linear (ms)", "full: peak MB",
                "fused: peak MB", "T x T weights (MB)"]
COST_WIDTHS = ["10%", "11%", "13%", "14%", "11%", "13%", "13%", "15%"]
PAIR_HEADERS = ["attention", "scores computed", "share of full", "full attention's weight it keeps",
                "mean error (all layers x heads)"]
PAIR_WIDTHS = ["16%", "30%", "14%", "20%", "20%"]


def cost_md(data: dict) -> str:
    fit = data["fits"]["full (by hand)"]
    g = data["geometry"]
    t = data["lengths"][-1]
    return (f"One attention layer of **{md_text(data['model'].get('checkpoint', data['role']))}** "
            f"({g['heads']} heads x {g['head_dim']}), {'causal' if data['causal'] else 'bidirectional'}, "
            f"{len(data['lengths'])} lengths measured in this one run (the fastest of {data['repeats']} or more calls each). Full attention's "
            f"time fits a + b T + c T² with c = {fit['c']:.3g} s per token² (R² {fit['r2']:.3f}); at {t:,} tokens "
            f"the T² term is {fit['quadratic_share_at_longest']:.0%} of it. "
            + (f"The encoder's own positions stop at {g['max_positions']:,} tokens: longer lengths time its attention "
               "geometry, not a text it could read. " if g["max_positions"] and g["max_positions"] < t else "")
            + "Memory is the process's measured peak above the start of each call.")


def cost_table(data: dict) -> dict:
    """One row per length: each method's time, and the peak memory of full attention and the fused kernel."""
    by = {(r["tokens"], r["method"]): r for r in data["rows"]}

    def mb(r):
        return "-" if r["peak_mb"] is None else f"{r['peak_mb']:,.1f}"

    rows = [[f"{t:,}"] + [fmt_ms(by[t, m]["seconds"]) for m in ("full (by hand)", "fused kernel", "sliding window",
                                                              "linear")]
            + [mb(by[t, "full (by hand)"]), mb(by[t, "fused kernel"]), f"{by[t, 'full (by hand)']['weights_mb']:,.1f}"]
            for t in data["lengths"]]
    return gr.update(value={"data": rows, "headers": COST_HEADERS}, column_widths=COST_WIDTHS)


def measure(role="encoder", max_tokens=1024, window=64):
    """/attention_cost: time and memory of one attention layer at 64 ... max_tokens tokens, four ways."""
    data = api.attention_cost(role, max_tokens, window)
    return cost_md(data), cost_figure(data, "seconds"), cost_figure(data, "peak_mb"), cost_table(data), data


def sparse_md(data: dict) -> str:
    s = data["settings"]
    return (f"{data['num_tokens']} tokens, {md_text(data['model'].get('checkpoint', data['role']))} "
            f"({data['num_layers']} layers x {data['num_heads']} heads). Sliding window ±{s['window']}; block-sparse: "
            f"blocks of {s['block']}, {s['global_tokens']} global tokens, {s['random_blocks']} random block(s) per "
            f"query block (seed {s['seed']}). Relative error = ||output - full attention's|| / ||full attention's||, "
            "per head, on the head's output vectors.")


def pairs_table(data: dict) -> dict:
    mean = data["mean_error"]
    kept = {"full": "100%", "linear": "- (no pattern: every key, other weights)"}
    rows = [[r["method"], f"{r['scores']:,}" if r["method"] != "linear" else r["note"], f"{r['share']:.0%}",
             kept.get(r["method"]) or f"{r['weight_kept']:.0%}",
             "0 (it is the reference)" if r["method"] == "full" else f"{mean[r['method']]:.1%}"] for r in data["cost"]]
    return gr.update(value={"data": rows, "headers": PAIR_HEADERS}, column_widths=PAIR_WIDTHS)


def compare(text="", role="encoder", layer=0, head=0, window=16, block=16, global_tokens=2, random_blocks=1, seed=0):
    """/sparse_attention: full, sliding-window, block-sparse and linear attention on the model's own q, k, v."""
    data = api.sparse_attention(text, role, layer, head, window, block, global_tokens, random_blocks, seed)
    return sparse_md(data), patterns_figure(data), errors_figure(data), pairs_table(data), data


def _sparse_controls():
    text = Textbox(label="Text (up to 256 tokens)", value=api.DEFAULT_TEXT, lines=3, max_lines=6,
                   elem_id="sparse-text")
    with gr.Row():
        role = Radio(ROLES, value="encoder", label="Model", elem_id="sparse-role")
        layer = Number(0, label="Layer", precision=0, elem_id="sparse-layer")
        head = Number(0, label="Head", precision=0, elem_id="sparse-head")
    with gr.Row():
        window = Slider(1, 64, value=16, step=1, label="Window (tokens each side)", elem_id="sparse-window")
        block = Slider(4, 64, value=16, step=4, label="Block size", elem_id="sparse-block")
        global_tokens = Slider(0, 8, value=2, step=1, label="Global tokens", elem_id="sparse-global")
        random_blocks = Slider(0, 4, value=1, step=1, label="Random blocks", elem_id="sparse-random")
    return [text, role, layer, head, window, block, global_tokens, random_blocks]


def build() -> None:
    gr.Markdown(INTRO, elem_id="cost-intro")
    with gr.Row():
        role = Radio(ROLES, value="encoder", label="Model geometry", elem_id="cost-role")
        max_tokens = Dropdown([512, 1024, 2048], value=1024, label="Longest text (tokens)", elem_id="cost-max")
        window = Slider(16, 256, value=64, step=16, label="Sliding window (tokens each side)", elem_id="cost-window")
    go = gr.Button("Measure the cost of attention", variant="primary", elem_id="cost-go")
    box = error_box(elem_id="cost-error")
    summary = gr.Markdown(elem_id="cost-summary")
    with gr.Row():
        time_plot = gr.Plot(label="Time", elem_id="cost-time")
        mem_plot = gr.Plot(label="Memory", elem_id="cost-memory")
    table = gr.Dataframe(headers=COST_HEADERS, column_widths=COST_WIDTHS, wrap=True,
                         label="Every measurement (time in ms; memory: peak MB above the start of the call)",
                         elem_id="cost-table")
    cost_json = raw_json("Raw result (JSON: what /attention_cost returns)", elem_id="cost-json")
    outs = [summary, time_plot, mem_plot, table, cost_json]
    declare(Endpoint("attention_cost", measure, {"role": role, "max_tokens": max_tokens, "window": window}, outs,
                     trigger=go, lane=LANE, errors=box, contract=CONTRACTS["attention_cost"]))
    gr.Markdown(SPARSE_INTRO, elem_id="sparse-intro")
    inputs = _sparse_controls()
    go2 = gr.Button("Compare on the model's own attention", variant="primary", elem_id="sparse-go")
    box2 = error_box(elem_id="sparse-error")
    summary2 = gr.Markdown(elem_id="sparse-summary")
    patterns = gr.Plot(label="Patterns", elem_id="sparse-patterns")
    pairs = gr.Dataframe(headers=PAIR_HEADERS, column_widths=PAIR_WIDTHS, wrap=True,
                         label="What each attention computes (mean over every layer and head)", elem_id="sparse-pairs")
    errors = gr.Plot(label="Error per layer and head", elem_id="sparse-errors")
    sparse_json = raw_json("Raw result (JSON: what /sparse_attention returns)", elem_id="sparse-json")
    outs2 = [summary2, patterns, errors, pairs, sparse_json]
    names = ("text", "role", "layer", "head", "window", "block", "global_tokens", "random_blocks")
    declare(Endpoint("sparse_attention", compare, dict(zip(names, inputs)), outs2, trigger=go2, lane=LANE, errors=box2, contract=CONTRACTS["sparse_attention"]))
    gr.Markdown(UNAVAILABLE, elem_id="future-unavailable")
