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

from backend.scratch.contracts import CONTRACTS
from backend.attention.views import encoder_decoder_views, iframe
from backend.scratch import (SEQ2SEQ_DEFAULTS as D, drop_seq2seq_session, export_seq2seq, inspect_toy, plan_seq2seq,
                             stop_seq2seq, toy_json, train_seq2seq_iter)
from components import shell as common
from components.shell import code_view, runs
from components.shell import SHORT_LANE, Slider, Textbox, error_box, md_text, raw_json
from components.shell.endpoint import Endpoint, Runs, declare
from components.scratch import trained
from components.scratch.plots import attention_heatmap, seq2seq_loss_figure
from components.scratch.trained import after_stop

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
WIDTHS = [32, 64, 96, 128]
TRAIN_NAMES = ("steps", "layers", "width", "heads", "learning_rate", "seed")  # /train_seq2seq's arguments
EXAMPLE = "the twenty-third of march , two thousand and four"
TEST_HEADERS, TEST_WIDTHS = ["input (words)", "reference", "model output", "right?"], ["46%", "18%", "18%", "18%"]
INTRO = (
    "### Chapter 3: an encoder-decoder trained from scratch, and cross-attention\n"
    "The transformer the book draws in chapter 3 has two halves: an **encoder** reads the whole input, a "
    "**decoder** writes the output one token at a time and, at every step, looks back at the encoder's states "
    "through **cross-attention**. Here a tiny one (BART's architecture, random weights) learns a toy translation: "
    "dates written in words into digits (*the twenty-third of march , two thousand and four* → *2004-03-23*). "
    "The output says the **year first**, the input says it **last**: watch the alignment heatmap show it.")


MODEL = trained.SessionModel("the encoder-decoder", stop_seq2seq, export_seq2seq, drop_seq2seq_session)


def plan_line(p: dict) -> str:
    return trained.plan_line(p, "encoder-decoder", "and the 500-date test")


def show_plan(steps, layers, width, heads, learning_rate, seed):
    return trained.said_plan(lambda: plan_seq2seq(steps, layers, heads, width, learning_rate=learning_rate, seed=seed),
                             plan_line)


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
    f, t = r["final"], r["test"]
    text = (trained.trained_line(r, f"{r['steps_per_s']} steps/s") + f". Final train loss **{f['train_loss']}**, "
            f"validation loss **{f['val_loss']}**, validation exact match **{f['val_exact_match']:.0%}** "
            f"{trained.plan_said(r)}.")
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


def run_train(steps=D["steps"], layers=D["layers"], width=D["width"], heads=D["heads"],
              learning_rate=D["learning_rate"], seed=D["seed"], request: gr.Request = None):
    """/train_seq2seq: train the tiny encoder-decoder; streams the loss; returns JSON at the end."""
    events = train_seq2seq_iter(MODEL.session(request), steps, layers, heads, width, learning_rate, seed)
    yield from trained.stream(events, lambda p: f"{p['data']['train_pairs']:,} pairs", _figure, _samples_html, _done, 8,
                              first="*Step 0: first check...*")


def _figure(losses: list, evals: list, plan: dict):
    return seq2seq_loss_figure(losses, evals, plan.get("steps"))


def _done(r: dict, plan: dict) -> tuple:
    s = r["settings"]
    return (final_md(r), seq2seq_loss_figure(r["losses"], r["evals"], plan.get("steps")), _samples_html(r["evals"]),
            _test_table(r), gr.update(interactive=True), _picker(s["layers"], s["layers"] - 1), _picker(s["heads"], 0),
            r)


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


def run_translate(text=EXAMPLE, layer=-1, head=0, request: gr.Request = None):
    """/translate_toy: translate a date in words and return its attentions for one layer/head (JSON)."""
    sid = MODEL.session(request)
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


def download(request: gr.Request = None):
    """/download_seq2seq: the session's encoder-decoder as a zip of a save_pretrained folder + tokenizer."""
    return MODEL.zipped(request)


def _controls():
    with gr.Row():
        return (trained.size_controls("s2s", D, 4, "Layers (each side)", WIDTHS)
                + trained.optimiser_controls("s2s", D))


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
    go, stop_btn, box, status = trained.train_row("s2s", "Train the encoder-decoder")
    with gr.Row():
        plot = gr.Plot(label="Loss and exact match", elem_id="scratch-s2s-loss")
        with gr.Column():
            gr.Markdown("**Validation translations** (newest first; ✓ exactly right)")
            samples = gr.HTML(max_height=460, elem_id="scratch-s2s-samples")
    test = gr.Dataframe(headers=TEST_HEADERS, label="Held-out test dates (the first 12, then mistakes)", wrap=True,
                        column_widths=TEST_WIDTHS, max_height=420, elem_id="scratch-s2s-test")
    dl = trained.download_row("s2s", "Your encoder-decoder")
    train_json = raw_json("Raw result (JSON: what /train_seq2seq returns)", elem_id="scratch-s2s-json")
    code = code_view.view("scratch-s2s")  # "The same in Python", under the raw result
    t_go, t_inputs, t_outputs = _look_inside()
    t_box = error_box(elem_id="scratch-s2s-translate-error")
    _, layer, head = t_inputs
    gr.on([w.change for w in controls], show_plan, controls, [plan_md], api_visibility="private", queue=False,
          trigger_mode="always_last")  # one listener answering the newest setting (as the GPT's plan)
    outputs = [status, plot, samples, test, dl[0], layer, head, train_json]
    kept = runs.panel("scratch-s2s", link="scratch")  # the tab has no link yet
    (ev,) = declare(Endpoint("train_seq2seq", run_train, dict(zip(TRAIN_NAMES, controls)), outputs, trigger=go,
                             lane=LANE, errors=box, cleared=[plot, samples, test, train_json],
                             result=train_json, code=code,
                             runs=Runs(kept, [status, plot, samples]), contract=CONTRACTS["train_seq2seq"]))
    ev.then(show_plan, controls, [plan_md], api_visibility="private")
    t_names = dict(zip(("text", "layer", "head"), t_inputs))
    declare(Endpoint(None, run_translate, t_names, t_outputs, trigger=ev.success, lane=SHORT_LANE))
    declare(Endpoint("translate_toy", run_translate, t_names, t_outputs, trigger=t_go, lane=SHORT_LANE, errors=t_box, contract=CONTRACTS["translate_toy"]))
    declare(Endpoint(None, run_translate, t_names, t_outputs, trigger=layer.input, also=[head.input], lane=SHORT_LANE,
                     options=dict(trigger_mode="always_last"), errors=t_box))
    trained.wire(MODEL, "download_seq2seq", download, stop_btn, status, dl, box)
