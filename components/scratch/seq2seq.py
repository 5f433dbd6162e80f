"""From scratch tab, third part (the book's chapter 3 architecture): a tiny encoder-decoder trained
from random weights to turn dates in words into digits, and its cross-attention.

Training shows its plan first, plots the loss and the validation exact match live and prints a
few validation translations at each check; the held-out test comes after. Then one input is
translated and looked at: the cross-attention alignment heatmap (output tokens x input tokens)
for a chosen layer/head beside the encoder's and the decoder's self-attention, the check that
recomputes that cross-attention from the weights, and bertviz's views with all three kinds.
The model belongs to the caller's Gradio session, like the tiny GPT's.
"""

from __future__ import annotations

import html

import gradio as gr

from backend.attention.views import encoder_decoder_views, iframe
from backend.runtime.errors import LabError
from backend.scratch import (SEQ2SEQ_DEFAULTS as D, drop_seq2seq_session, export_seq2seq, inspect_toy, plan_seq2seq,
                             stop_seq2seq, toy_json, train_seq2seq_iter)
from components import shell as common
from components.shell import lifecycle, runs
from components.shell.badge import model_time
from components.shell import (SHORT_LANE, Dropdown, Number, Slider, Textbox, clear_on_error, error_box, md_text,
                               raw_json, user_errors)
from components.scratch.gpt import after_stop
from components.scratch.plots import attention_heatmap, seq2seq_loss_figure, zip_line
from components.shell.session_memory import download_root, served
from components.shell.session import session_of, stop_said

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
WIDTHS = [32, 64, 96, 128]
EXAMPLE = "the twenty-third of march , two thousand and four"
TEST_HEADERS, TEST_WIDTHS = ["input (words)", "reference", "model output", "right?"], ["46%", "18%", "18%", "18%"]
INTRO = (
    "### Chapter 3: an encoder-decoder trained from scratch, and cross-attention\n"
    "The transformer the book draws in chapter 3 has two halves: an **encoder** reads the whole input, a "
    "**decoder** writes the output one token at a time and, at every step, looks back at the encoder's states "
    "through **cross-attention**. Here a tiny one (BART's architecture, random weights) learns a toy translation: "
    "dates written in words into digits (*the twenty-third of march , two thousand and four* → *2004-03-23*). "
    "The output says the **year first**, the input says it **last**: watch the alignment heatmap show it.")


def _session(request: gr.Request | None) -> str:
    return session_of(request, 'the encoder-decoder')


def plan_line(p: dict) -> str:
    fits = "fits" if p["fits"] else f"**does not fit**: at most {p['max_steps']:,} steps at this size"
    return (f"Plan: **{p['steps']:,} steps** of a **{p['parameters']:,}-parameter** encoder-decoder "
            f"(~{p['seconds_per_step']:.2f} s a step) plus {p['evals']} validation checks and the 500-date test ≈ "
            f"**{p['seconds']:.0f} s** ({md_text(p['basis'])}); this server's budget per request is {p['budget_s']:g} s: "
            f"it {fits}. {p['device_note']}")


def show_plan(steps, layers, width, heads, learning_rate, seed):
    try:
        return plan_line(plan_seq2seq(steps, layers, heads, width, learning_rate=learning_rate, seed=seed))
    except LabError as exc:
        return f"**Cannot train with these settings:** {html.escape(str(exc))}"


def _samples_html(evals: list[dict]) -> str:
    """Each check's validation translations, newest first (✓ right, ✗ wrong)."""
    blocks = []
    for e in reversed(evals):
        items = "".join(f"<li>{html.escape(s['source'])} → <code>{html.escape(s['output']) or '(nothing)'}</code> "
                        f"{'✓' if s['right'] else '✗ (' + html.escape(s['reference']) + ')'}</li>" for s in e["samples"])
        blocks.append(f"<div class='s2s-sample'><b>step {e['step']:,}</b>: validation exact match "
                      f"{e['val_exact_match']:.0%}, loss {e['val_loss']:.3f}<ul style='margin:2px 0 8px'>{items}</ul></div>")
    return "<div id='scratch-s2s-samples-list'>" + "".join(blocks) + "</div>"


def final_md(r: dict) -> str:
    how = f"all {r['steps_run']:,} steps" if not r["stopped"] else \
        f"**{r['steps_run']:,} of {r['steps']:,} steps** ({md_text(r['stopped'])}; the model so far is kept)"
    f, t = r["final"], r["test"]
    text = (f"Trained {how}: **{model_time(r['seconds'])}** ({r['train_seconds']:.1f} s of steps, {r['steps_per_s']} steps/s): "
            f"{r['parameters']:,} parameters. Final train loss **{f['train_loss']}**, validation loss "
            f"**{f['val_loss']}**, validation exact match **{f['val_exact_match']:.0%}** (plan said "
            f"{r['plan']['seconds']:.0f} s, {md_text(r['plan']['basis'])}).")
    text += after_stop(r)
    if t:
        text += (f"\n\n**Held-out test: {t['right']} of {t['items']} dates translated exactly right "
                 f"({t['exact_match']:.1%})**: dates the model never saw in training ({t['seconds']:.1f} s).")
    elif r["stopped"] == "stopped" and r["steps_run"]:
        text += "\n\n**Held-out test: skipped** (stopped): the model so far is kept, without a test score."
    return text


def _test_table(r: dict):
    t = r.get("test")
    rows = [[x["source"], x["reference"], x["output"], "✓ yes" if x["right"] else "✗ no"] for x in (t["rows"] if t else [])]
    return gr.update(value={"data": rows, "headers": TEST_HEADERS}, column_widths=TEST_WIDTHS)


def _picker(n: int, value: int) -> dict:
    """A layer or head slider over 0..n-1 (a slider needs min < max: with n = 1 it stays fixed at 0)."""
    return gr.update(maximum=max(1, n - 1), value=value, interactive=n > 1)


@user_errors
def run_train(steps=D["steps"], layers=D["layers"], width=D["width"], heads=D["heads"],
              learning_rate=D["learning_rate"], seed=D["seed"], request: gr.Request = None):
    """/train_seq2seq: train the tiny encoder-decoder; streams the loss; returns JSON at the end."""
    sid = _session(request)
    losses, evals, total = [], [], None
    skip = gr.update()
    for ev in train_seq2seq_iter(sid, steps, layers, heads, width, learning_rate, seed):
        kind = ev["event"]
        if kind == "plan":
            total = ev["steps"]
            yield (f"*Training: {ev['parameters']:,} parameters on {ev['data']['train_pairs']:,} pairs; press Stop to "
                   "keep the model trained so far.*", skip, skip, skip, skip, skip, skip, skip)
            continue
        if kind == "step":
            losses += ev["losses"]
        elif kind == "eval":
            evals.append(ev)
        elif kind == "done":
            r = ev["result"]
            s = r["settings"]
            yield (final_md(r), seq2seq_loss_figure(r["losses"], r["evals"], total), _samples_html(r["evals"]),
                   _test_table(r), gr.update(interactive=True),
                   _picker(s["layers"], s["layers"] - 1), _picker(s["heads"], 0), r)
            return
        status = f"*Step {len(losses):,}/{total:,}, loss {losses[-1]:.3f}*" if losses else "*Step 0: first check...*"
        yield (status, seq2seq_loss_figure(losses, evals, total), _samples_html(evals) if kind == "eval" else skip,
               skip, skip, skip, skip, skip)


def stop(request: gr.Request):
    return stop_said(stop_seq2seq, getattr(request, "session_hash", None),
                     "*Stopping after the current step; the model trained so far is kept...*")


def _cross_notice(fx: dict) -> str:
    parts = []
    for name, g in fx["cross"].items():
        if g["digits"]:
            parts.append(f"the {name} digits {' '.join(g['digits'])} look most at "
                         f"{', '.join(repr(w) for w in g['looks_at'])} (input positions "
                         f"{', '.join(str(p + 1) for p in g['positions'])} of {fx['source_length']})")
    return ("; ".join(parts) + ". The output writes the year first while the input says it last, so a head that "
            "aligns shows the year as an off-diagonal block; not every head aligns (some park on </s>): try others.")


def _figures(r: dict, fx: dict):
    lh = (r["layer"], r["head"])
    where = f"layer {r['layer']}, head {r['head']}"
    top = fx["encoder_top"]
    out, src, dec_in = r["output_tokens"], r["source_tokens"], r["decoder_input_tokens"]
    cross = attention_heatmap(r["cross_attentions"][lh], out, src, f"{where}: where each output token looked in the input",
                              "output token written at this step", "input token (encoder)", _cross_notice(fx))
    enc = attention_heatmap(r["encoder_attentions"][lh], src, src, where, "input token",
                            "input token", f"{top['rows']} of {fx['encoder_rows']} input tokens attend most to "
                            f"{top['token']!r} (position {top['position'] + 1}) and {fx['encoder_near']} to themselves "
                            "or a neighbour. Every cell may be used (no mask): the encoder reads in both directions, "
                            "and a column lit for many rows is a token this head gathers from everywhere.",
                            colour="Greens")
    dec = attention_heatmap(r["decoder_attentions"][lh], dec_in, dec_in, where,
                            "decoder input (what was written so far)", "decoder input",
                            f"the upper triangle is empty: a step sees only what was already written (causal mask). "
                            f"Of {fx['decoder_rows']} steps after the first, {fx['decoder_previous']} look most at the "
                            f"token just before and {fx['decoder_start']} others at the start token <s>.", colour="Oranges")
    return cross, enc, dec


def _output_md(r: dict) -> str:
    conf = ", ".join(f"{md_text(t)} {p:.0%}" for t, p in zip(r["output_tokens"], r["confidence"]))
    text = (f"**{md_text(r['input'])}** → **{md_text(r['output']) or '(nothing)'}** (greedy; the probability the model "
            f"gave each token it wrote: {conf})")
    if r["unknown_words"]:
        text += (f"\n\n⚠️ Words the model never saw in training became `<unk>`: "
                 f"{', '.join(md_text(w) for w in r['unknown_words'])}. It only knows the toy task's words.")
    return text


def _check_md(j: dict) -> str:
    d = j["check"]["max_abs_diff"]
    mark = "✅" if j["check"]["below_1e-4"] else "❌"
    return (f"{mark} **Check:** the cross-attention of layer {j['layer']}, head {j['head']} recomputed from the weights "
            f"(Q = decoder state × W_q, K = encoder output × W_k, softmax(QKᵀ/√d)) differs from the model's own "
            f"by at most **{d:.2e}** ({'bit for bit: the same float32 operations; ' if d == 0 else ''}computed now).")


@user_errors
def run_translate(text=EXAMPLE, layer=-1, head=0, request: gr.Request = None):
    """/translate_toy: translate a date in words and return its attentions for one layer/head (JSON)."""
    sid = _session(request)
    r = inspect_toy(sid, text, layer, head)
    j = toy_json(r)
    cross, enc, dec = _figures(r, j["facts"])
    head_doc, model_doc = encoder_decoder_views(r["encoder_attentions"], r["decoder_attentions"],
                                                r["cross_attentions"], r["source_tokens"], r["decoder_input_tokens"],
                                                title="Tiny encoder-decoder:")
    n = len(r["source_tokens"]) + len(r["decoder_input_tokens"])
    return (_output_md(r), _check_md(j), cross, enc, dec,
            iframe(head_doc, height=int(min(max(n * 12 + 220, 420), 1200)), title="bertviz head view"),
            iframe(model_doc, height=720, title="bertviz model view"), j)


@user_errors
def download(request: gr.Request = None):
    """/download_seq2seq: the session's encoder-decoder as a zip of a save_pretrained folder + tokenizer."""
    r = export_seq2seq(_session(request), root=download_root())
    return served(r["path"]), zip_line(r)


def drop_session(request: gr.Request):
    drop_seq2seq_session(getattr(request, "session_hash", None) if request is not None else None)


def _controls():
    with gr.Row():
        steps = Slider(10, 2000, value=D["steps"], step=10, label="Training steps", elem_id="scratch-s2s-steps")
        layers = Slider(1, 4, value=D["layers"], step=1, label="Layers (each side)",
                        elem_id="scratch-s2s-layers")
        width = Dropdown(WIDTHS, value=D["width"], label="Width (embedding size)", elem_id="scratch-s2s-width")
        heads = Dropdown([1, 2, 4, 8], value=D["heads"], label="Heads", elem_id="scratch-s2s-heads")
        lr = Number(D["learning_rate"], label="Learning rate (AdamW)", elem_id="scratch-s2s-lr")
        seed = Number(D["seed"], label="Seed", precision=0, elem_id="scratch-s2s-seed")
    return [steps, layers, width, heads, lr, seed]


def _look_inside():
    gr.Markdown("#### Look inside: translate a date and see where each output token looked")
    with gr.Row():
        text = Textbox(label="A date in words", value=EXAMPLE, scale=3, elem_id="scratch-s2s-text")
        layer = Slider(0, D["layers"] - 1, value=D["layers"] - 1, step=1, label="Layer", interactive=False,
                       elem_id="scratch-s2s-layer")
        head = Slider(0, D["heads"] - 1, value=0, step=1, label="Head", interactive=False, elem_id="scratch-s2s-head")
    go = gr.Button("Translate and show attention", elem_id="scratch-s2s-translate")
    out_md = gr.Markdown(elem_id="scratch-s2s-output")
    check = gr.Markdown(elem_id="scratch-s2s-check")
    cross = gr.Plot(label="Cross-attention", elem_id="scratch-s2s-cross")
    with gr.Row():
        enc = gr.Plot(label="Encoder self-attention", elem_id="scratch-s2s-encoder")
        dec = gr.Plot(label="Decoder self-attention", elem_id="scratch-s2s-decoder")
    with gr.Tabs(overflow_behavior="wrap"):  # on a phone every view stays in sight (not behind "...")
        with gr.Tab("bertviz head view"):
            head_view = gr.HTML(elem_id="scratch-s2s-head-view")
        with gr.Tab("bertviz model view"):
            model_view = gr.HTML(elem_id="scratch-s2s-model-view")
    out_json = raw_json("Raw result (JSON: what /translate_toy returns)", elem_id="scratch-s2s-translate-json")
    return go, [text, layer, head], [out_md, check, cross, enc, dec, head_view, model_view, out_json]


def build() -> None:
    gr.Markdown(INTRO, elem_id="scratch-s2s-intro")
    controls = _controls()
    plan_md = gr.Markdown(show_plan(*[c.value for c in controls]), elem_id="scratch-s2s-plan")
    with gr.Row():
        go = gr.Button("Train the encoder-decoder", variant="primary", elem_id="scratch-s2s-go")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="scratch-s2s-stop")
    box = error_box(elem_id="scratch-s2s-error")
    status = gr.Markdown(elem_id="scratch-s2s-status")
    with gr.Row():
        plot = gr.Plot(label="Loss and exact match", elem_id="scratch-s2s-loss")
        with gr.Column():
            gr.Markdown("**Validation translations** (newest first; ✓ exactly right)")
            samples = gr.HTML(max_height=460, elem_id="scratch-s2s-samples")
    test = gr.Dataframe(headers=TEST_HEADERS, label="Held-out test dates (the first 12, then mistakes)", wrap=True,
                        column_widths=TEST_WIDTHS, max_height=420, elem_id="scratch-s2s-test")
    with gr.Row():
        dl_btn = gr.Button("Download (zip: save_pretrained folder + tokenizer + model card)", interactive=False,
                           elem_id="scratch-s2s-download")
        dl_file = gr.File(label="Your encoder-decoder", visible=False, interactive=False, elem_id="scratch-s2s-file")
    dl_md = gr.Markdown(elem_id="scratch-s2s-download-status")
    train_json = raw_json("Raw result (JSON: what /train_seq2seq returns)", elem_id="scratch-s2s-json")
    t_go, t_inputs, t_outputs = _look_inside()
    t_box = error_box(elem_id="scratch-s2s-translate-error")
    _, layer, head = t_inputs
    for widget in controls:
        widget.change(show_plan, controls, [plan_md], api_visibility="private", queue=False)
    outputs = [status, plot, samples, test, dl_btn, layer, head, train_json]
    ev = go.click(run_train, controls, outputs, api_name="train_seq2seq", **LANE)
    clear_on_error(ev, [plot, samples, test, train_json], box)
    runs.track(runs.panel("scratch-s2s", link="scratch"), ev, [status, plot, samples])  # the tab has no link yet
    ev.then(show_plan, controls, [plan_md], api_visibility="private")
    ev.success(run_translate, t_inputs, t_outputs, api_visibility="private", **SHORT_LANE)
    stop_btn.click(stop, None, [status], api_visibility="private", queue=False)
    tev = t_go.click(run_translate, t_inputs, t_outputs, api_name="translate_toy", **SHORT_LANE)
    clear_on_error(tev, t_outputs, t_box)
    for slider in (layer, head):
        sev = slider.input(run_translate, t_inputs, t_outputs, api_visibility="private", trigger_mode="always_last",
                           **SHORT_LANE)
        clear_on_error(sev, t_outputs, t_box)
    ev = dl_btn.click(download, None, [dl_file, dl_md], api_name="download_seq2seq")
    clear_on_error(ev, [dl_file, dl_md], box)
    lifecycle.after(ev, "success", lambda: gr.update(visible=True), None, [dl_file])
    root = gr.context.Context.root_block
    if root is not None:
        root.unload(drop_session)
