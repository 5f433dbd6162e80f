"""The Attention tab: bertviz views, a heatmap per head, a per-head summary, positional
encodings, and the attention math recomputed step by step from the real weights.

Handlers pass the role to `backend.attention` and format its plain results. `/attention` and
`/attention_math` are public APIs (their first output is the JSON contract); the heatmap and
positions events are UI-only.
"""

from __future__ import annotations

import gradio as gr

from backend import attention
from components import attention_plots as plots
from components.common import MODEL_QUEUE, Number, Radio, Slider, Textbox, md_text, model_badge, user_errors

ROLES = attention.ROLES
INJECTION_EXAMPLE = '</script><img src=x onerror=alert(1)> "quotes" \\ backslash \u2028 end'


def _top_heads_md(top_heads: dict) -> str:
    lines = ["| metric | most extreme heads (layer, head: value) |", "|---|---|"]
    for name, heads in top_heads.items():
        cells = ", ".join(f"L{h['layer']} H{h['head']}: {h['value']:.3f}" for h in heads)
        lines.append(f"| {attention.SUMMARY_METRICS[name]} | {cells} |")
    return "\n".join(lines)


@user_errors
def run_attention(text, text_b, role, layer, progress=gr.Progress()):
    """/attention: tokens, the attention array (layers x heads x T x T, 4 decimals), the views."""
    r = attention.attention(text, text_b, role, layer, progress=progress)
    badge = model_badge(r["model"]) + (f"\n\n{r['num_tokens']} tokens · {r['num_layers']} layers × {r['num_heads']} heads"
                                       + (" · causal (decoder)" if r["causal"] else " · bidirectional (encoder)"))
    if r["note"]:
        badge += f"\n\n> {md_text(r['note'])}"
    return (
        r["payload"],
        r["head_view"],
        r["model_view"],
        plots.summary_grid(r["summary"]),
        _top_heads_md(r["top_heads"]),
        badge,
        gr.update(maximum=r["num_layers"] - 1),
        gr.update(maximum=r["num_heads"] - 1),
    )


@user_errors
def run_heatmap(text, text_b, role, layer, head):
    r = attention.heatmap(text, text_b, role, layer, head)
    title = f"{r['checkpoint']}: layer {r['layer']}, head {r['head']}" + (
        " (causal: upper triangle is 0)" if r["causal"] else "")
    return plots.attention_heatmap(r["matrix"], r["tokens"], title)


@user_errors
def run_math(text, text_b, role, layer, head, query_index, progress=gr.Progress()):
    """/attention_math: one layer/head step by step, and its max abs diff from the model's weights."""
    payload = attention.attention_math(text, text_b, role, layer, head, query_index, progress=progress)
    tol = f"{payload['tolerance']:.0e}".replace("e-0", "e-")  # 1e-4
    ok = f"✅ under {tol}" if payload["within_tolerance"] else f"❌ over {tol}"
    if payload["model_dtype"] != "float32":
        ok += f" (the model runs in {payload['model_dtype']}; our recomputation is float32)"
    steps = [
        f"**Input** x {tuple(payload['input_shape'])}: {payload['input_note']}.",
        f"**Q = x W_q, K = x W_k, V = x W_v** per head, d_k = {payload['head_dim']}.",
    ]
    if payload["rotary"]:
        steps.append("**Rotary**: Q and K rotated by position x frequency (see Positions).")
    if payload["num_kv_heads"] != payload["num_heads"]:
        steps.append(f"**Grouped KV**: {payload['num_heads']} query heads share {payload['num_kv_heads']} "
                     f"key/value heads; head {payload['head']} uses key/value head {payload['kv_head']}.")
    steps += [
        f"**scores = Q K^T / sqrt(d_k)**, then the mask ({'causal + padding' if payload['causal'] else 'padding'}), "
        "then softmax over each row, then **output = weights V**.",
        f"**Max |ours - model's|**: head {payload['max_abs_diff']:.2e}, all heads of layer "
        f"{payload['layer']}: {payload['max_abs_diff_layer']:.2e} {ok}",
    ]
    md = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, start=1))
    return payload, plots.math_matrices(payload), plots.query_bars(payload), md, model_badge(payload["model"])


@user_errors
def run_positions(role, progress=gr.Progress()):
    report = attention.positions(role, progress=progress)
    sim = report["learned_similarity"]
    rot = report["rotary"]
    text = []
    if sim is not None:
        text.append("**Learned position embeddings**: neighbouring positions have similar vectors "
                    "(the bright diagonal band): the model learned that order matters locally.")
    if rot is not None:
        text.append(f"**Rotary (RoPE)**: {rot['explanation']}")
    return (
        plots.sinusoid_heatmap(report["sinusoidal"]),
        plots.similarity_heatmap(sim, f"{report['checkpoint']}: cosine similarity of learned position embeddings")
        if sim is not None else None,
        plots.rotary_plot(rot) if rot is not None else None,
        "\n\n".join(text) or "This model has no learned or rotary position table to show.",
        model_badge(report["model"]),
    )


def build() -> None:
    with gr.Column(elem_id="attention-tab"):
        gr.Markdown(
            "### Attention\nWhich tokens does each token look at? The book's chapter 3 on real models: "
            "the **encoder** (bidirectional) and the **decoder** (causal). Type a text, or two sentences "
            "for a pair, and press *Show attention*."
        )
        with gr.Row():
            text = Textbox(label="Text (sentence A)", value=attention.FIRST_EXAMPLE[0], lines=2, scale=3)
            text_b = Textbox(label="Sentence B (optional: makes a pair)", value=attention.FIRST_EXAMPLE[1], lines=2, scale=3)
            role = Radio(list(ROLES), value="encoder", label="Model", scale=1)
        with gr.Row():
            show = gr.Button("Show attention", variant="primary")
            with gr.Accordion("API option", open=False):
                api_layer = Number(value=-1, precision=0, label="Layer in the returned array (-1 = all layers)")
        gr.Examples(
            [[attention.FIRST_EXAMPLE[0], attention.FIRST_EXAMPLE[1], "encoder"],
             ["The animal didn't cross the street because it was too tired", "", "encoder"],
             ["The cat sat on the mat because it was tired", "", "decoder"],
             [INJECTION_EXAMPLE, "", "encoder"]],
            inputs=[text, text_b, role],
            label="Examples",
        )
        badge = gr.Markdown(elem_id="attention-badge")
        with gr.Tabs():
            with gr.Tab("Head view"):
                head_html = gr.HTML(elem_id="attention-head-view")
            with gr.Tab("Model view"):
                model_html = gr.HTML(elem_id="attention-model-view")
            with gr.Tab("Heatmap"):
                with gr.Row():
                    hm_layer = Slider(0, 5, value=0, step=1, label="Layer")
                    hm_head = Slider(0, 11, value=0, step=1, label="Head")
                heatmap = gr.Plot(label="Attention weights", elem_id="attention-heatmap")
            with gr.Tab("Head summary"):
                summary_plot = gr.Plot(label="Per-head summary", elem_id="attention-summary")
                top_md = gr.Markdown()
            with gr.Tab("Step by step (the math)"):
                gr.Markdown(
                    "The book's `scaled_dot_product_attention`, fed with this layer's real input and weights. "
                    "Compare our softmax weights with the model's own."
                )
                with gr.Row():
                    # Numbers, not sliders: a slider's bounds would change with the model and the
                    # API would refuse valid layers; the backend checks the range and says what is valid.
                    m_layer = Number(value=0, precision=0, label="Layer (0 = first)")
                    m_head = Number(value=0, precision=0, label="Head (0 = first)")
                    m_query = Number(value=-1, precision=0, label="Query token index (-1 = last)")
                    m_run = gr.Button("Compute step by step")
                m_md = gr.Markdown(elem_id="attention-math-summary")
                m_plot = gr.Plot(label="Matrices")
                m_query_plot = gr.Plot(label="One query token")
                m_badge = gr.Markdown()
                with gr.Accordion("Raw result (JSON, the /attention_math API)", open=False):
                    m_json = gr.JSON()
            with gr.Tab("Positions"):
                pos_run = gr.Button("Show positional encodings")
                pos_md = gr.Markdown()
                pos_sin = gr.Plot(label="Sinusoidal")
                pos_learned = gr.Plot(label="Learned positions")
                pos_rot = gr.Plot(label="Rotary frequencies")
                pos_badge = gr.Markdown()
        with gr.Accordion("Raw result (JSON, the /attention API)", open=False):
            out_json = gr.JSON()

        show.click(
            run_attention,
            inputs=[text, text_b, role, api_layer],
            outputs=[out_json, head_html, model_html, summary_plot, top_md, badge, hm_layer, hm_head],
            api_name="attention",
            **MODEL_QUEUE,
        ).then(
            run_heatmap, inputs=[text, text_b, role, hm_layer, hm_head], outputs=heatmap,
            api_visibility="private", **MODEL_QUEUE,
        )
        for slider in (hm_layer, hm_head):
            slider.release(run_heatmap, inputs=[text, text_b, role, hm_layer, hm_head], outputs=heatmap,
                           api_visibility="private", **MODEL_QUEUE)
        m_run.click(
            run_math,
            inputs=[text, text_b, role, m_layer, m_head, m_query],
            outputs=[m_json, m_plot, m_query_plot, m_md, m_badge],
            api_name="attention_math",
            **MODEL_QUEUE,
        )
        pos_run.click(run_positions, inputs=[role], outputs=[pos_sin, pos_learned, pos_rot, pos_md, pos_badge],
                      api_visibility="private", **MODEL_QUEUE)
