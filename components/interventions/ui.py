"""The Interventions tab: remove or scale attention heads and whole sub-layers, see what changes.

The book's chapter 3 builds multi-head attention and the feed-forward layer; here a learner
takes pieces out of the real model and watches the next-token distribution (decoder) or the
sentence embedding (encoder) move. Handlers call `backend.interventions` and only format its
plain result. `/intervene` and `/sweep_heads` are public APIs (first output: the JSON).
"""

from __future__ import annotations

import gradio as gr

from backend.interventions.contracts import CONTRACTS
from backend import interventions
from backend.runtime import config
from components.interventions import plots
from components.shell import code_view, lifecycle, links, runs
from components.shell.badge import model_time
from components.shell import LONG_LANE, SHORT_LANE, Number, Radio, Textbox, error_box, md_text, model_badge, raw_json
from components.shell.endpoint import After, Endpoint, Link, Runs, declare, served

ROLES = interventions.ROLES
LAYER_HINT, HEAD_HINT = 30, 12  # choices before the first run (SmolLM2: 30 x 9, MiniLM: 6 x 12); a run sets the real ones
WHAT = ["every head", "the attention sub-layer", "the MLP sub-layer"]
NO_CONTINUATION = "(the encoder does not generate text: choose the decoder to see continuations)"
ACTIONS = {"remove (=0)": "=0", "halve (*0.5)": "*0.5", "double (*2)": "*2"}


def add_item(current: str, layer, what, action) -> str:
    """The helper's "Add": one item appended to the spec text (the backend checks the ranges)."""
    target = (f"L{layer}H*" if what == "every head" else f"L{layer}.attn" if what == "the attention sub-layer"
              else f"L{layer}.mlp" if what == "the MLP sub-layer" else f"L{layer}H{str(what).removeprefix('head ')}")
    item = target + ACTIONS.get(action, "=0")
    current = (current or "").strip().rstrip(",")
    return f"{current}, {item}" if current else item


def _who(r: dict) -> str:
    return (f"**{md_text(r['model']['checkpoint'])}** ({r['role']}: {r['num_layers']} layers × {r['num_heads']} heads), "
            f"spec `{r['spec'] or '(empty: nothing changed)'}`")


def _check_md(c: dict) -> str:
    ok = "✅" if c["within_tolerance"] else "❌"
    return (f"{ok} **Checked another way**: the same spec applied by editing the weights of the output "
            f"projections instead of the activations gives {c['compared']} "
            + ("**exactly equal** to" if c["max_abs_diff"] == 0 else f"within **{c['max_abs_diff']:.1e}** of")
            + f" the hooks' result (tolerance {c['tolerance']:.0e}).") + (f" {c['rounding_note']}" if c.get("rounding_note") else "")


def _decoder_md(r: dict) -> str:
    nt = r["next_token"]
    n = len(r["tokens"])
    changed = "stays" if nt["top1_before"] == nt["top1_after"] else "**changes**"
    return (f"{_who(r)}. After {md_text(repr(nt['after_token']))} the most likely next token {changed}: "
            f"{md_text(repr(nt['top1_before']))} → {md_text(repr(nt['top1_after']))}.\n\n"
            f"**KL(before ‖ after) = {nt['kl']:.4f} nats** at the last position, {r['kl_mean']:.4f} on average over "
            f"the {n} positions. KL is 0 when the next-token distribution is unchanged, and grows as the changed "
            f"model puts its probability on other tokens. The top-1 prediction flipped at **{r['num_flips']} of {n}** "
            f"positions.\n\n{_check_md(r['check'])}")


def _encoder_md(r: dict) -> str:
    e = r["embedding"]
    text = (f"{_who(r)}. **Cosine between the sentence embeddings before and after = {e['cosine']:.6f}** "
            f"(1 − cosine = {e['one_minus_cosine']:.2e}): the mean-pooled, length-1 vector of "
            f"{e['dims']} dimensions that semantic search compares. 1 means the change did not move the embedding at all; "
            "the further below 1, the more the removed pieces mattered for this sentence.")
    s = r["sentiment"]
    if "skipped" in s:
        text += f"\n\nSentiment classifier: not run ({md_text(s['skipped'])})."
    else:
        b, a = s["before"], s["after"]
        verdict = "**changes its label**" if s["changed"] else "keeps its label"
        how = config.method_name((s.get("model") or {}).get("method") or config.METHOD_FINETUNED)
        text += (f"\n\nThe sentiment classifier built on this encoder ({md_text(how)}) with the same spec {verdict}: "
                 f"**{b['label']} {b['score']:.1%}** → **{a['label']} {a['score']:.1%}**.")
    return text + "\n\n" + _check_md(r["check"])


def shape_updates(r: dict | None, layer=0, what="head 0") -> tuple:
    """After a run, the helper's layer and head choices are this model's (a value it lacks goes back to 0)."""
    if not isinstance(r, dict) or "num_heads" not in r:
        return gr.update(), gr.update()
    layers = list(range(r["num_layers"]))
    heads = [f"head {h}" for h in range(r["num_heads"])] + WHAT
    return (gr.update(choices=layers, value=layer if layer in layers else 0),
            gr.update(choices=heads, value=what if what in heads else "head 0"))


def pick_shape(model, layer=0, what="head 0") -> tuple:
    """Before a run: the pickers offer the chosen model's own layers and heads (a 9-head decoder is
    never offered heads 9-11 that /intervene would refuse)."""
    return shape_updates(interventions.model_shape(model), layer, what)


def run_intervene(model, text, spec, new_tokens, top_k, progress=gr.Progress()):
    """/intervene: the text through the model as it is and with the spec applied."""
    r = interventions.intervene(model, text, spec, new_tokens, top_k, progress=progress)
    name = r["model"]["checkpoint"]
    if r["role"] == "decoder":
        c = r["continuation"]
        return (r, model_badge(r["model"], r["seconds"]), _decoder_md(r),
                plots.next_token(r["next_token"]["top"], f"{name}: next token after "
                                 f"{r['next_token']['after_token']!r}, as it is vs with {r['spec'] or 'nothing'}"),
                plots.flips(r["flips"], f"Along the text: KL per position, red = top-1 flipped ({r['num_flips']})"),
                r["text"] + c["before"], r["text"] + c["after"])
    return (r, model_badge(r["model"], r["seconds"]), _encoder_md(r), None,
            plots.token_cosine(r["tokens"], r["token_cosine"], f"{name}: how far each token's last hidden state turned"),
            NO_CONTINUATION, NO_CONTINUATION)


def run_sweep(model, text, layer, progress=gr.Progress()):
    """/sweep_heads: every head of one layer removed alone, ranked."""
    r = interventions.sweep_heads(model, text, layer, progress=progress)
    metric = "the KL at the last position" if r["metric"] == "kl_last" else "1 − cosine of the sentence embedding"
    top = r["heads"][0] if r["heads"] else None
    done = (f"all {r['num_heads']} heads" if r["complete"]
            else f"{r['measured']} of {r['num_heads']} heads (stopped: {r['finish_reason']})")
    text_md = (f"**{md_text(r['model']['checkpoint'])}**, layer {r['layer']}: {done} removed one at a time, ranked by "
               f"{metric} ({model_time(r['seconds'])}, {r['seconds_per_head'] or 0:.3f} s per head). "
               + (f"Most important here: **head {top['head']}** ({top['score']:.3g}). Ties go to the lower head index, "
                  "so the same input always gives the same order." if top else ""))
    fig = plots.sweep(r, f"{r['model']['checkpoint']}, layer {r['layer']}: heads ranked by {metric}") if top else None
    return r, text_md, fig


def build() -> None:
    with gr.Column(elem_id="interventions-panel"):
        gr.Markdown(
            "### Interventions\n**Chapter 3, Transformer Anatomy**: each layer's attention is several heads whose outputs "
            "are concatenated and projected, then a feed-forward (MLP) sub-layer; both add to the residual stream. Here "
            "you take pieces out of the real model (or scale them) and see what changes on the same text. Layers and "
            "heads count from 0. Spec: `L2H3=0` removes head 3 of layer 2, `L5H1*0.5` halves it, `L1H*=0` removes every "
            "head of layer 1, `L3.mlp=0` / `L4.attn=0` make a whole sub-layer add nothing.")
        with gr.Row():
            model = Radio(list(ROLES), value="decoder", label="Model", scale=1)
            text = Textbox(label="Text", value=interventions.EXAMPLES["decoder"][0], lines=2, scale=3)
        spec = Textbox(label="Spec (what to remove or scale)", value=interventions.EXAMPLES["decoder"][1],
                       elem_id="interventions-spec")
        with gr.Row():
            layer_pick = gr.Dropdown(list(range(LAYER_HINT)), value=0, label="Layer", scale=1)
            what_pick = gr.Dropdown([f"head {h}" for h in range(HEAD_HINT)] + WHAT, value="head 0", label="Which",
                                    scale=2)
            action_pick = gr.Dropdown(list(ACTIONS), value="remove (=0)", label="Do", scale=1)
            add = gr.Button("Add to the spec", scale=1, elem_id="interventions-add")
        with gr.Row():
            new_tokens = Number(value=8, precision=0,
                                label=f"Greedy tokens to continue (decoder, ≤ {interventions.MAX_NEW_TOKENS})")
            top_k = Number(value=8, precision=0, label=f"Top tokens to show (≤ {interventions.MAX_TOP_K})")
        run = gr.Button("Run with and without", variant="primary", elem_id="interventions-run")
        gr.Examples([[role, *interventions.EXAMPLES[role]] for role in ("decoder", "encoder")]
                    + [["decoder", "The Eiffel Tower is in the city of", "L0.mlp=0"]],
                    inputs=[model, text, spec], label="Examples")
        box = error_box(elem_id="interventions-error")
        badge = gr.Markdown(elem_id="interventions-badge")
        link_bar = links.bar("interventions", run=run)
        summary = gr.Markdown(elem_id="interventions-summary")
        next_plot = gr.Plot(label="Next token, before and after", elem_id="interventions-next")
        flips_plot = gr.Plot(label="Along the text", elem_id="interventions-flips")
        with gr.Row():
            cont_before = gr.Textbox(label="Greedy continuation, as it is", interactive=False,
                                     elem_id="interventions-before")
            cont_after = gr.Textbox(label="Greedy continuation, with the spec", interactive=False,
                                    elem_id="interventions-after")
        out_json = raw_json(elem_id="interventions-json")
        code = code_view.view("interventions")  # "The same in Python", under the raw result
        kept = runs.panel("interventions")  # two ablations side by side
        gr.Markdown("#### Most important heads of one layer\nRemove each head of the layer alone and rank them by what "
                    "that does (decoder: KL of the next token; encoder: 1 − cosine of the sentence embedding).")
        with gr.Row():
            sweep_layer = Number(value=0, precision=0, label="Layer to sweep", scale=1)
            sweep_run = gr.Button("Rank the heads of this layer", scale=2, elem_id="interventions-sweep-run")
        sweep_box = error_box(elem_id="interventions-sweep-error")
        sweep_md = gr.Markdown(elem_id="interventions-sweep-summary")
        sweep_plot = gr.Plot(label="Heads ranked", elem_id="interventions-sweep")
        sweep_json = raw_json(elem_id="interventions-sweep-json")

        add.click(add_item, [spec, layer_pick, what_pick, action_pick], spec, api_visibility="private", queue=False)
        gr.on([model.change, layer_pick.focus, what_pick.focus], served(pick_shape), [model, layer_pick, what_pick],
              [layer_pick, what_pick], **lifecycle.PAGE_ONLY)
        outputs = [out_json, badge, summary, next_plot, flips_plot, cont_before, cont_after]
        declare(Endpoint(
            "intervene", run_intervene, {"model": model, "text": text, "spec": spec, "new_tokens": new_tokens,
                                         "top_k": top_k}, outputs, trigger=run, lane=SHORT_LANE, errors=box,
            result=out_json, code=code,
            after=[After("success", shape_updates, [out_json, layer_pick, what_pick], [layer_pick, what_pick])],
            link=Link("interventions", link_bar, run=run, params={"model": model, "text": text, "spec": spec},
                      results=outputs),
            runs=Runs(kept, [summary, next_plot, cont_before, cont_after, badge]), contract=CONTRACTS["intervene"]))
        declare(Endpoint("sweep_heads", run_sweep, {"model": model, "text": text, "layer": sweep_layer},
                         [sweep_json, sweep_md, sweep_plot], trigger=sweep_run, lane=LONG_LANE, errors=sweep_box, contract=CONTRACTS["sweep_heads"]))
