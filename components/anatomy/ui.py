"""The Anatomy tab: the whole transformer recomputed from its real weights, step by step.

The book's chapter 3 builds the encoder class by class; here each step is a short function
run on the real model, shown next to its numbers, and every layer is checked against the
model's own hidden states. Handlers call `backend.anatomy` and only format its plain result.
`/anatomy` is a public API (its first output is the JSON contract).
"""

from __future__ import annotations

import time

import gradio as gr

from backend.anatomy.contracts import CONTRACTS
from backend import anatomy
from components.anatomy import plots
from components.shell import code_view, links, runs
from components.shell import SHORT_LANE, Number, Radio, Textbox, error_box, md_text, model_badge, raw_json
from components.shell.endpoint import Endpoint, Link, Runs, declare

ROLES = anatomy.ROLES


def _verdict(r: dict) -> str:
    worst = r["max_abs_diff"]
    ok = "✅ every layer under" if r["within_tolerance"] else "❌ over"
    text = (f"**{r['num_tokens']} tokens · {r['num_layers']} layers · {r['num_heads']} heads · "
            f"{r['family']} recipe.** Largest |ours − model's| over all layers: **{worst:.1e}** "
            f"{ok} {r['tolerance']:.0e}. Of the model time: from scratch {r['timing']['from_scratch_s']:.2f} s, "
            f"the model's own forward {r['timing']['model_forward_s']:.2f} s.")
    if r["last_compared_after_final_norm"]:
        text += " (The model reports its last hidden state after the final norm, so ours is compared after `final_norm`.)"
    if r.get("rounding"):
        text += " " + r["rounding"]["note"]
    return text


def _code_md(r: dict) -> str:
    """Each step's source, as the pass ran it, with the numbers it produced."""
    diffs = {row["name"]: row["max_abs_diff"] for row in r["layers"]}
    worst_layer = max((row["max_abs_diff"] for row in r["layers"][1:]), default=0.0)
    parts = [f"Embeddings vs the model's: **{diffs['embeddings']:.1e}**; worst layer: **{worst_layer:.1e}**."]
    for step in r["code"]:
        measured = "".join(f"\n\n**Measured**, {label}: `{_short(value)}`"
                           for label, value in step.get("numbers", {}).items())
        parts.append(f"#### `{step['name']}`\n{step['doc']}\n\n```python\n{step['source'].rstrip()}\n```{measured}")
    return "\n\n".join(parts)


def _short(value) -> str:
    if isinstance(value, list):
        return ", ".join(f"{v:.2g}" for v in value)
    return f"{value:.1e}"


def _lens_md(lens: dict | None) -> str:
    if lens is None:
        return "The logit lens needs a language-model head: choose the **decoder**."
    ok = "✅" if lens["last_layer_max_abs_diff"] < anatomy.TOLERANCE and lens["agrees_with_greedy"] else "❌"
    return (f"{ok} After the last layer the lens *is* the model: logits differ by at most "
            f"**{lens['last_layer_max_abs_diff']:.1e}**, and the top-1 next token "
            f"**{md_text(repr(lens['greedy_next_token']))}** {'equals' if lens['agrees_with_greedy'] else 'differs from'} "
            "greedy decoding's. Hover a cell for the top 5.")


def _pooling_md(pooling: dict | None) -> str:
    if pooling is None:
        return "Mean pooling applies to the encoder; choose **encoder** to see a sentence vector being made."
    ok = "✅" if pooling["within_tolerance"] else "❌"
    return (f"{ok} Mean of the last layer's token vectors (padding excluded), scaled to length 1, on "
            f"**{md_text(pooling['checkpoint'])}**: {pooling['dims']} dimensions, max |ours − embedder's| "
            f"**{pooling['max_abs_diff']:.1e}**, cosine {pooling['cosine']:.6f}. First values: "
            f"`{pooling['head']}`")


def _budget_md(b: dict) -> str:
    parts = ", ".join(f"{k} {v:,}" for k, v in b["attention_parts"].items())
    check = "✅ equals" if b["matches"] else "❌ differs from"
    text = f"Total **{b['total']:,}** {check} `model.num_parameters()` = {b['num_parameters']:,}. Attention: {parts}."
    return text + (f" {b['note']}" if b["note"] else "")


def _masks_md(m: dict) -> str:
    masked, total = plots.masked_count(m["mask"])
    return f"**{masked} of {total} query-key pairs masked** for this input. " + _masks_why(m)


def _masks_why(m: dict) -> str:
    if m["kind"] == "padding":
        rows = " · ".join(f"`{m_}`" for m_ in m["batch_attention_mask"])
        return (f"Sentences A and B as a batch of two, padded to the same length: attention masks {rows}. "
                f"Shown: the shorter one, layer {m['layer']}, head {m['head']}: padding keys are masked for "
                f"every query (batch max diff from the model {m['batch_max_abs_diff']:.1e}).")
    if m["kind"] == "causal":
        return (f"Layer {m['layer']}, head {m['head']}: each token may look only at itself and earlier tokens; "
                "the upper triangle is set to −∞ before the softmax, so its weights are 0.")
    return (f"Layer {m['layer']}, head {m['head']}: one sentence, nothing to mask: every token may attend to every "
            "token (the whole mask is the \"may attend\" colour). Add sentence B to see padding.")


def run_anatomy(text, text_b, role, layer, head, token_index, override, progress=gr.Progress()):
    """/anatomy: every layer recomputed from the weights, checked, and the views built on it."""
    started = time.perf_counter()
    r = anatomy.anatomy(text, text_b, role, layer, head, token_index, override or None, progress=progress)
    seconds = time.perf_counter() - started
    name = r["model"]["checkpoint"]
    stream = r["stream"]
    masks = r["masks"]
    return (
        r,
        model_badge(r["model"], seconds),
        _verdict(r),
        plots.layer_diffs(r["layers"], r["tolerance"], f"{name}: from scratch vs the model, per layer"),
        _code_md(r),
        plots.residual_stream(stream, f"Residual stream at token {stream['token_index']} ({stream['token']!r})"),
        plots.masked_attention(masks, f"Layer {masks['layer']}, head {masks['head']}: {masks['kind']} mask"),
        _masks_md(masks),
        plots.logit_lens(r["lens"], f"{name}: logit lens, last {len(r['lens']['positions'])} positions")
        if r["lens"] else None,
        _lens_md(r["lens"]),
        _pooling_md(r["pooling"]),
        plots.parameter_budget(r["budget"], f"{name}: parameters by component"),
        _budget_md(r["budget"]),
    )


def build() -> None:
    with gr.Column(elem_id="anatomy-panel"):
        gr.Markdown(
            "### Anatomy\nThe whole transformer, computed by hand from the real weights: embeddings, then each "
            "attention and feed-forward sub-layer with its norm and residual, in the model's own order. Every "
            "layer is checked against the model's hidden states, and each step's code is shown beside its numbers."
        )
        with gr.Row():
            text = Textbox(label="Text (sentence A)", value=anatomy.FIRST_EXAMPLE[0], lines=2, scale=3)
            # Empty by default: a decoder appends sentence B to the text (the encoder shows padding).
            text_b = Textbox(label="Sentence B (optional: the encoder shows its padding mask)",
                                value="", lines=2, scale=3)
            role = Radio(list(ROLES), value="encoder", label="Model", scale=1)
        with gr.Row():
            # Numbers, not sliders: the range depends on the model; the backend says what is valid.
            layer = Number(value=0, precision=0, label="Layer for the mask view (0 = first)")
            head = Number(value=0, precision=0, label="Head for the mask view")
            token_index = Number(value=-1, precision=0, label="Token for the residual stream (-1 = last)")
            override = Textbox(label="Model (optional: a Hub id or folder; empty = the role's model)", value="")
        run = gr.Button("Take it apart", variant="primary", elem_id="anatomy-run")
        gr.Examples(
            [[anatomy.FIRST_EXAMPLE[0], anatomy.FIRST_EXAMPLE[1], "encoder"],
             ["The capital of France is", "", "decoder"],
             ["Transformers are the most important architecture in NLP", "", "decoder"]],
            inputs=[text, text_b, role],
            label="Examples",
        )
        box = error_box(elem_id="anatomy-error")
        badge = gr.Markdown(elem_id="anatomy-badge")
        link_bar = links.bar("anatomy", run=run)
        verdict = gr.Markdown(elem_id="anatomy-verdict")
        with gr.Tabs(overflow_behavior="wrap"):  # on a phone every view stays in sight (not behind "...")
            with gr.Tab("Layer by layer"):
                diff_plot = gr.Plot(label="Max abs difference per layer", elem_id="anatomy-diffs")
                with gr.Accordion("The code of each step (what ran)", open=False):
                    code_md = gr.Markdown(elem_id="anatomy-code")
            with gr.Tab("Residual stream"):
                stream_plot = gr.Plot(label="Residual stream", elem_id="anatomy-stream")
            with gr.Tab("Masked attention"):
                masks_md = gr.Markdown(elem_id="anatomy-masks-caption")
                masks_plot = gr.Plot(label="Before the mask, the mask, after", elem_id="anatomy-masks")
            with gr.Tab("Logit lens"):
                lens_md = gr.Markdown()
                lens_plot = gr.Plot(label="Logit lens", elem_id="anatomy-lens")
            with gr.Tab("Sentence vector"):
                pooling_md = gr.Markdown(elem_id="anatomy-pooling")
            with gr.Tab("Parameter budget"):
                budget_plot = gr.Plot(label="Parameters by component", elem_id="anatomy-budget")
                budget_md = gr.Markdown()
        out_json = raw_json(elem_id="anatomy-json")
        # "The same in Python", under the raw result ("anatomy-lib": #anatomy-code is the steps' own code above)
        code = code_view.view("anatomy-lib")

        outputs = [out_json, badge, verdict, diff_plot, code_md, stream_plot, masks_plot, masks_md,
                   lens_plot, lens_md, pooling_md, budget_plot, budget_md]
        links.model_box("anatomy", override)
        declare(Endpoint(
            "anatomy", run_anatomy, {"text": text, "text_b": text_b, "role": role, "layer": layer, "head": head,
                                     "token_index": token_index, "override": override}, outputs,
            trigger=run, lane=SHORT_LANE, errors=box, result=out_json, code=code,
            link=Link("anatomy", link_bar, run=run, params={"text": text, "text_b": text_b, "role": role,
                                                            "layer": layer, "head": head, "token": token_index}),
            runs=Runs(runs.panel("anatomy"), [badge, verdict, diff_plot, lens_md, pooling_md]), contract=CONTRACTS["anatomy"]))
