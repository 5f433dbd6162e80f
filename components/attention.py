"""The Attention tab: bertviz views, a heatmap per head, a per-head summary, positional
encodings, and the attention math recomputed step by step from the real weights.

Handlers fetch the encoder or decoder from the hub, call `backend.attention` and format its
plain results. `/attention` and `/attention_math` are public APIs (their first output is the
JSON contract); the heatmap and positions events are UI-only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import gradio as gr

from backend.attention import extract as A
from backend.attention import views as V
from backend import models
from backend.attention import positions as P
from backend.errors import InputError
from components import attention_plots as plots
from components.common import MODEL_QUEUE, model_badge, user_errors

ROLES = ("encoder", "decoder")
INJECTION_EXAMPLE = '</script><img src=x onerror=alert(1)> "quotes" \\ backslash \u2028 end'

_CACHE: OrderedDict = OrderedDict()  # (role, checkpoint, text, text_b) -> AttentionResult
_CACHE_SIZE = 3
_CACHE_LOCK = threading.Lock()


def _role(role: str) -> str:
    role = (role or "").strip().lower()
    if role not in ROLES:
        raise InputError(f"Role must be 'encoder' or 'decoder', got {role!r}.")
    return role


def _load(role: str, progress=None):
    if progress is not None:
        progress(0.1, desc=f"Loading the {role} (first use only)")
    lm = models.get_hub().load(_role(role))
    if progress is not None:
        progress(0.5, desc="Running the model")
    return lm


def _attention(lm, text: str, text_b: str | None):
    """The attention for (model, text, pair), computed once and kept for the heatmap sliders."""
    key = (lm.role, lm.checkpoint, text, text_b or "")
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    result = A.compute_attention(lm.model, lm.tokenizer, text, text_b or None)
    with _CACHE_LOCK:
        _CACHE[key] = result
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def _layer_arg(layer) -> int | None:
    """-1 / empty = all layers; anything else is checked by the backend (clear message if bad)."""
    if layer is None or layer == "" or str(layer).strip() in ("-1", "-1.0"):
        return None
    return layer


def _views(result, checkpoint: str) -> tuple[str, str]:
    t = len(result.tokens)
    if t > A.VIEW_MAX_TOKENS:
        msg = (f"The text has {t} tokens; the bertviz views draw at most {A.VIEW_MAX_TOKENS} "
               f"(every layer x head x token^2 line). Use the Heatmap and Head summary tabs, or shorten the text.")
        return V.message_html(msg), V.message_html(msg)
    head = V.iframe(
        V.head_view_html(result.attention, result.tokens, result.sentence_b_start,
                         title=f"{checkpoint}: head view. Colours are heads (click to toggle); "
                               "hover a token to see where it attends."),
        height=V.head_view_height(t), title="bertviz head view")
    model = V.iframe(
        V.model_view_html(result.attention, result.tokens, result.sentence_b_start,
                          title=f"{checkpoint}: model view, every layer (rows) and head (columns). "
                                "Click a thumbnail to enlarge."),
        height=720, title="bertviz model view")
    return head, model


def _top_heads_md(payload: dict) -> str:
    lines = ["| metric | most extreme heads (layer, head: value) |", "|---|---|"]
    for name, heads in payload["top_heads"].items():
        cells = ", ".join(f"L{h['layer']} H{h['head']}: {h['value']:.3f}" for h in heads)
        lines.append(f"| {A.SUMMARY_METRICS[name]} | {cells} |")
    return "\n".join(lines)


@user_errors
def run_attention(text, text_b, role, layer, progress=gr.Progress()):
    """/attention: tokens, the attention array (layers x heads x T x T, 4 decimals), the views."""
    lm = _load(role, progress)
    result = _attention(lm, text, text_b)
    payload = A.attention_payload(result, _layer_arg(layer))
    payload["role"] = lm.role
    payload["model"] = lm.describe()
    progress(0.8, desc="Drawing the views")
    head_html, model_html = _views(result, lm.checkpoint)
    summary = A.head_summary(result.attention, result.special)
    n_layers, n_heads = result.attention.shape[:2]
    badge = model_badge(lm.describe()) + (f"\n\n{len(result.tokens)} tokens · {n_layers} layers × {n_heads} heads"
                                          + (" · causal (decoder)" if result.causal else " · bidirectional (encoder)"))
    if payload["note"]:
        badge += f"\n\n> {payload['note']}"
    return (
        payload,
        head_html,
        model_html,
        plots.summary_grid(summary),
        _top_heads_md(payload),
        badge,
        gr.update(maximum=n_layers - 1),
        gr.update(maximum=n_heads - 1),
    )


@user_errors
def run_heatmap(text, text_b, role, layer, head):
    lm = _load(role)
    result = _attention(lm, text, text_b)
    layer, head = A.check_layer_head(result, min(int(layer), result.attention.shape[0] - 1),
                                     min(int(head), result.attention.shape[1] - 1))
    title = f"{lm.checkpoint}: layer {layer}, head {head}" + (" (causal: upper triangle is 0)" if result.causal else "")
    return plots.attention_heatmap(result.attention[layer, head], result.tokens, title)


@user_errors
def run_math(text, text_b, role, layer, head, query_index, progress=gr.Progress()):
    """/attention_math: one layer/head step by step, and its max abs diff from the model's weights."""
    lm = _load(role, progress)
    q = None if query_index is None or query_index == "" else query_index
    payload = A.attention_math(lm.model, lm.tokenizer, text, layer, head, q, text_b or None)
    payload["role"] = lm.role
    payload["model"] = lm.describe()
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
    return payload, plots.math_matrices(payload), plots.query_bars(payload), md, model_badge(lm.describe())


@user_errors
def run_positions(role, progress=gr.Progress()):
    lm = _load(role, progress)
    report = P.position_report(lm.model)
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
        plots.similarity_heatmap(sim, f"{lm.checkpoint}: cosine similarity of learned position embeddings")
        if sim is not None else None,
        plots.rotary_plot(rot) if rot is not None else None,
        "\n\n".join(text) or "This model has no learned or rotary position table to show.",
        model_badge(lm.describe()),
    )


def build() -> None:
    with gr.Column(elem_id="attention-tab"):
        gr.Markdown(
            "### Attention\nWhich tokens does each token look at? The book's chapter 3 on real models: "
            "the **encoder** (bidirectional) and the **decoder** (causal). Type a text, or two sentences "
            "for a pair, and press *Show attention*."
        )
        with gr.Row():
            text = gr.Textbox(label="Text (sentence A)", value=A.FIRST_EXAMPLE[0], lines=2, scale=3)
            text_b = gr.Textbox(label="Sentence B (optional: makes a pair)", value=A.FIRST_EXAMPLE[1], lines=2, scale=3)
            role = gr.Radio(list(ROLES), value="encoder", label="Model", scale=1)
        with gr.Row():
            show = gr.Button("Show attention", variant="primary")
            with gr.Accordion("API option", open=False):
                api_layer = gr.Number(value=-1, precision=0, label="Layer in the returned array (-1 = all layers)")
        gr.Examples(
            [[A.FIRST_EXAMPLE[0], A.FIRST_EXAMPLE[1], "encoder"],
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
                    hm_layer = gr.Slider(0, 5, value=0, step=1, label="Layer")
                    hm_head = gr.Slider(0, 11, value=0, step=1, label="Head")
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
                    m_layer = gr.Number(value=0, precision=0, label="Layer (0 = first)")
                    m_head = gr.Number(value=0, precision=0, label="Head (0 = first)")
                    m_query = gr.Number(value=-1, precision=0, label="Query token index (-1 = last)")
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
