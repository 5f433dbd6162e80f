"""The Attention tab: bertviz views, a heatmap per head, a per-head summary, positional
encodings, and the attention math recomputed step by step from the real weights.

Handlers pass the role to `backend.attention` and format its plain results. `/attention` and
`/attention_math` are public APIs (their first output is the JSON contract); the heatmap and
positions events are UI-only.
"""

from __future__ import annotations

import gradio as gr

from backend.attention.contracts import CONTRACTS
from backend import attention
from components.attention import plots
from components.shell import code_view, links, runs
from components.shell import SHORT_LANE, Number, Radio, Slider, Textbox, error_box, md_text, model_badge, raw_json
from components.shell.endpoint import Endpoint, Link, Runs, declare

ROLES = attention.ROLES
TOP_HEADS_HEADERS = ["metric", "head", "value", "what it measures"]


def _top_heads_rows(top_heads: dict) -> list[list]:
    """One row per listed head (a dataframe, not Markdown: a token like <|im_start|> in the
    description would split a Markdown row at its '|')."""
    return [[plots.SUMMARY_TITLES.get(name, name), f"L{h['layer']} H{h['head']}", round(h["value"], 3),
             attention.SUMMARY_METRICS[name]]
            for name, heads in top_heads.items() for h in heads]


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
        _top_heads_rows(r["top_heads"]),
        badge,
        gr.update(maximum=r["num_layers"] - 1),
        gr.update(maximum=r["num_heads"] - 1),
    )


def run_heatmap(text, text_b, role, layer, head):
    r = attention.heatmap(text, text_b, role, layer, head)
    title = f"{r['checkpoint']}: layer {r['layer']}, head {r['head']}" + (
        " (causal: upper triangle is 0)" if r["causal"] else "")
    return plots.attention_heatmap(r["matrix"], r["tokens"], title)


def run_math(text, text_b, role, layer, head, query_index, progress=gr.Progress()):
    """/attention_math: one layer/head step by step, and its max abs diff from the model's weights."""
    payload = attention.attention_math(text, text_b, role, layer, head, query_index, progress=progress)
    tol = f"{payload['tolerance']:.0e}".replace("e-0", "e-")  # 1e-4
    ok = f"✅ under {tol}" if payload["within_tolerance"] else f"❌ over {tol}"
    if payload.get("rounding"):
        ok += f" ({payload['rounding']['note']})"
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
        if sim is None:
            text.append("This model adds **no position vectors** to its input, so it has no learned position "
                        "table to plot: it uses rotary positions, which act inside attention (frequencies below).")
    # A plot with nothing to show is hidden, not left as an empty frame.
    learned = (plots.similarity_heatmap(sim, f"{report['checkpoint']}: cosine similarity of learned position embeddings")
               if sim is not None else None)
    rotary = plots.rotary_plot(rot) if rot is not None else None
    return (
        plots.sinusoid_heatmap(report["sinusoidal"]),
        gr.update(value=learned, visible=learned is not None),
        gr.update(value=rotary, visible=rotary is not None),
        "\n\n".join(text) or "This model has no learned or rotary position table to show.",
        model_badge(report["model"]),
    )


# The view is a whole document (vendored bertviz JS and the data inline) in an iframe's srcdoc:
# the browser saves it as it is, a file that draws offline; nothing is written on the server.
_SAVE_VIEW_JS = """() => {
  const frame = document.querySelector('#__ID__ iframe');
  if (!frame || !frame.srcdoc) { alert('Press Show attention first: there is no view to save yet.'); return; }
  const url = URL.createObjectURL(new Blob([frame.srcdoc], {type: 'text/html'}));
  const a = document.createElement('a');
  a.href = url; a.download = '__ID__.html'; document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}"""


def _download_button(view_id: str) -> gr.Button:
    """A button that saves the view beside it as a standalone HTML file (opens offline)."""
    btn = gr.Button("Download this view (HTML, works offline)", size="sm", elem_id=f"{view_id}-download")
    btn.click(None, None, None, js=_SAVE_VIEW_JS.replace("__ID__", view_id), api_visibility="private")
    return btn


def _math_tab():
    """The step-by-step tab: the book's scaled dot-product attention on this layer's real weights."""
    with gr.Tab("Step by step (the math)"):
        gr.Markdown(
            "The book's `scaled_dot_product_attention`, fed with this layer's real input and weights. "
            "Compare our softmax weights with the model's own. *Show attention* computes layer 0, head 0; "
            "pick another and recompute here."
        )
        with gr.Row():
            # Numbers, not sliders: a slider's bounds would change with the model and the
            # API would refuse valid layers; the backend checks the range and says what is valid.
            m_layer = Number(value=0, precision=0, label="Layer (0 = first)")
            m_head = Number(value=0, precision=0, label="Head (0 = first)")
            m_query = Number(value=-1, precision=0, label="Query token index (-1 = last)")
            m_run = gr.Button("Recompute step by step")
        m_box = error_box(elem_id="attention-math-error")
        m_md = gr.Markdown(elem_id="attention-math-summary")
        m_plot = gr.Plot(show_label=False, elem_id="attention-math-matrices")
        m_query_plot = gr.Plot(show_label=False, elem_id="attention-math-query")
        m_badge = gr.Markdown()
        m_json = raw_json("Raw result (JSON: what /attention_math returns)", elem_id="attention-math-json")
    return m_layer, m_head, m_query, m_run, m_box, m_md, m_plot, m_query_plot, m_badge, m_json


def _positions_tab():
    """The positions tab: sinusoidal, learned and rotary position encodings of the chosen model."""
    with gr.Tab("Positions"):
        pos_md = gr.Markdown(elem_id="attention-positions")
        pos_sin = gr.Plot(show_label=False, elem_id="attention-pos-sin")
        pos_learned = gr.Plot(show_label=False, elem_id="attention-pos-learned")
        pos_rot = gr.Plot(show_label=False, elem_id="attention-pos-rotary")
        pos_badge = gr.Markdown()
    return pos_md, pos_sin, pos_learned, pos_rot, pos_badge


def build() -> None:
    with gr.Column(elem_id="attention-tab"):
        gr.Markdown(
            "### Attention\nWhich tokens does each token look at? The book's chapter 3 on real models: "
            "the **encoder** (bidirectional) and the **decoder** (causal). Type a text, or two sentences "
            "for a pair, and press *Show attention*: every view below, the step-by-step math and the "
            "positions included, is drawn from that one press."
        )
        with gr.Row():
            text = Textbox(label="Text (sentence A)", value=attention.FIRST_EXAMPLE[0], lines=2, scale=3)
            text_b = Textbox(label="Sentence B (optional: makes a pair)", value=attention.FIRST_EXAMPLE[1], lines=2, scale=3)
            role = Radio(list(ROLES), value="encoder", label="Model", scale=1)
        with gr.Row():
            show = gr.Button("Show attention", variant="primary", elem_id="attention-run")
            with gr.Accordion("API option", open=False):
                api_layer = Number(value=-1, precision=0, label="Layer in the returned array (-1 = all layers)")
        gr.Examples(
            [[attention.FIRST_EXAMPLE[0], attention.FIRST_EXAMPLE[1], "encoder"],
             ["The animal didn't cross the street because it was too tired", "", "encoder"],
             ["The cat sat on the mat because it was tired", "", "decoder"]],
            inputs=[text, text_b, role],
            label="Examples",
        )
        box = error_box(elem_id="attention-error")
        badge = gr.Markdown(elem_id="attention-badge")
        link_bar = links.bar("attention", run=show)
        with gr.Tabs(overflow_behavior="wrap"):  # on a phone every view stays in sight (not behind "...")
            with gr.Tab("Head view"):
                head_html = gr.HTML(elem_id="attention-head-view")
                _download_button("attention-head-view")
            with gr.Tab("Model view"):
                model_html = gr.HTML(elem_id="attention-model-view")
                _download_button("attention-model-view")
            with gr.Tab("Heatmap"):
                with gr.Row():
                    hm_layer = Slider(0, 5, value=0, step=1, label="Layer")
                    hm_head = Slider(0, 11, value=0, step=1, label="Head")
                # No component label: it would sit on top of the figure's own title.
                heatmap = gr.Plot(show_label=False, elem_id="attention-heatmap")
            with gr.Tab("Head summary"):
                summary_plot = gr.Plot(show_label=False, elem_id="attention-summary")
                top_df = gr.Dataframe(headers=TOP_HEADS_HEADERS, label="Most extreme heads per metric",
                                      wrap=True, column_widths=["22%", "12%", "10%", "56%"], interactive=False, max_height=900,
                                      elem_id="attention-top-heads")
            m_layer, m_head, m_query, m_run, m_box, m_md, m_plot, m_query_plot, m_badge, m_json = _math_tab()
            pos_md, pos_sin, pos_learned, pos_rot, pos_badge = _positions_tab()
        out_json = raw_json(elem_id="attention-json")
        code = code_view.view("attention")  # "The same in Python", under the raw result

        kept = runs.panel("attention")

        outputs = [out_json, head_html, model_html, summary_plot, top_df, badge, hm_layer, hm_head]
        math_in = {"text": text, "text_b": text_b, "role": role, "layer": m_layer, "head": m_head,
                   "query_index": m_query}
        math_out = [m_json, m_plot, m_query_plot, m_md, m_badge]
        pos_out = [pos_sin, pos_learned, pos_rot, pos_md, pos_badge]
        ev, = declare(Endpoint(
            "attention", run_attention, {"text": text, "text_b": text_b, "role": role, "layer": api_layer}, outputs,
            trigger=show, lane=SHORT_LANE, errors=box, result=out_json, code=code,
            cleared=[out_json, head_html, model_html, summary_plot, top_df, badge, heatmap, *math_out, *pos_out],
            link=Link("attention", link_bar, run=show,
                      params={"text": text, "text_b": text_b, "role": role,
                              "layer": (hm_layer, 0, 99), "head": (hm_head, 0, 99)}),
            runs=Runs(kept, [badge, summary_plot, top_df]), contract=CONTRACTS["attention"]))
        # One press fills every view: the heatmap, the math and the positions follow the main result
        # (private); the heatmap also redraws when a slider is let go.
        declare(Endpoint(None, run_heatmap, {"text": text, "text_b": text_b, "role": role, "layer": hm_layer,
                                             "head": hm_head}, [heatmap], trigger=ev.success,
                         also=[hm_layer.release, hm_head.release], lane=SHORT_LANE))
        declare(Endpoint(None, run_math, math_in, math_out, trigger=ev.success, lane=SHORT_LANE))
        declare(Endpoint(None, run_positions, {"role": role}, pos_out, trigger=ev.success, lane=SHORT_LANE))
        declare(Endpoint("attention_math", run_math, math_in, math_out, trigger=m_run, lane=SHORT_LANE,
                         errors=m_box, contract=CONTRACTS["attention_math"]))
