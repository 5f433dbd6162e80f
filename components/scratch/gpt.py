"""From scratch tab, second part (the book's chapter 10): a tiny GPT trained from random weights
on the tab's text, so the learner watches gibberish become words.

The plan (parameters, seconds, whether it fits one request) is shown before training and
checked again when Train is pressed; the loss is plotted live and the samples are printed with
their step; Stop keeps the model trained so far. The model belongs to the caller's Gradio
session (`gr.Request.session_hash`), like the Train tab's, and downloads as a zip.
"""

from __future__ import annotations

import html

import gradio as gr

from backend.runtime.errors import LabError
from backend.scratch import (GPT_DEFAULTS, drop_gpt_session, export_gpt, plan_gpt, stop_gpt, train_gpt_iter)
from components import shell as common
from components.shell import lifecycle, links, runs
from components.shell.badge import model_time
from components.shell import (SHORT_LANE, Dropdown, Number, Radio, Slider, clear_on_error, error_box, file_path,
                               md_text, raw_json, user_errors)
from components.scratch.plots import gpt_loss_figure, zip_line
from components.shell.session_memory import download_root, served
from components.shell.session import session_of, stop_said

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
TOKENS = [("Bytes (256 tokens: every UTF-8 byte)", "bytes"), ("The BPE above (retrained at its vocabulary size)", "bpe")]
WIDTHS = [32, 64, 96, 128, 192, 256]
INTRO = (
    "### Chapter 10: a tiny GPT trained from scratch\n"
    "The book's last step: a GPT-2 architecture with **random weights**, trained on the text above to predict the "
    "next token. This one is tiny (a few layers, a small width, a context of 64 tokens) so it trains in a minute on "
    "a small CPU. Watch the loss fall and the samples go from random bytes to letters, then to words. The dashed "
    "line is the loss of the best model that ignores context (the text's unigram entropy): below it, the model "
    "uses what came before.")


def _session(request: gr.Request | None) -> str:
    return session_of(request, 'the tiny GPT')


def _samples_md(evals: list[dict]) -> str:
    """Each sample labelled with its step (newest first), as preformatted text (no markdown in it)."""
    rows = [f"<div class='gpt-sample'><b>step {e['step']:,}</b> (validation loss {e['val_loss']:.3f})"
            f"<pre style='white-space:pre-wrap;margin:2px 0 8px'>{html.escape(e['sample'])}</pre></div>"
            for e in reversed(evals)]
    return "<div id='scratch-gpt-samples-list'>" + "".join(rows) + "</div>"


def plan_line(p: dict) -> str:
    fits = ("fits" if p["fits"] else f"**does not fit**: at most {p['max_steps']:,} steps at this size")
    return (f"Plan: **{p['steps']:,} steps** of a **{p['parameters']:,}-parameter** GPT "
            f"(~{p['seconds_per_step']:.2f} s a step) plus {p['evals']} validation checks and samples ≈ "
            f"**{p['seconds']:.0f} s** ({md_text(p['basis'])}); this server's budget per request is "
            f"{p['budget_s']:g} s: it {fits}. {p['device_note']}")


def show_plan(steps, layers, width, heads, learning_rate, seed, tokens, vocab):
    """Before training: the plan, from the settings alone (no model runs); an error is shown, not raised."""
    try:
        return plan_line(plan_gpt(tokens, vocab, steps, layers, heads, width, learning_rate=learning_rate, seed=seed))
    except LabError as exc:
        return f"**Cannot train with these settings:** {html.escape(str(exc))}"


def final_md(r: dict) -> str:
    f = r["final"]
    how = f"all {r['steps_run']:,} steps" if not r["stopped"] else \
        f"**{r['steps_run']:,} of {r['steps']:,} steps** ({md_text(r['stopped'])}; the model so far is kept)"
    below = ("below" if f["val_loss"] is not None and f["val_loss"] < r["unigram_entropy"] else "not yet below")
    return (f"Trained {how}: **{model_time(r['seconds'])}** ({r['train_seconds']:.1f} s of steps, "
            f"**{r['tokens_per_s']:,.0f} tokens/s**): {r['parameters']:,} parameters, {r['vocab_size']:,} tokens "
            f"({md_text(r['tokens'])}). Final train loss **{f['train_loss']}**, validation loss **{f['val_loss']}**, "
            f"{below} the unigram entropy {r['unigram_entropy']} (plan said {r['plan']['seconds']:.0f} s, "
            f"{md_text(r['plan']['basis'])}).{after_stop(r)}{overfit_line(r)}")


def overfit_line(r: dict) -> str:
    """The run's overfitting verdict (backend.scratch.fit), said when the losses show it."""
    fit = r.get("fit") or {}
    if not fit.get("overfitting"):
        return ""
    return (f" **Overfitting:** {md_text(fit['why'])}: the model is learning its training text by heart, not the "
            f"language. The model at step {fit['best_step']:,} generalised best; fewer steps, a smaller model or "
            "more text would help.")


def after_stop(r: dict) -> str:
    """What Stop skipped (issue #39: no validation or test pass runs after it), said rather than hidden."""
    step = (r.get("final") or {}).get("val_step")
    if r.get("stopped") != "stopped" or step is None or step == r["steps_run"]:
        return ""
    return f" The validation figures are from step {step:,}: no validation pass runs after Stop."


@user_errors
def run_gpt(steps=GPT_DEFAULTS["steps"], layers=GPT_DEFAULTS["layers"], width=GPT_DEFAULTS["width"],
            heads=GPT_DEFAULTS["heads"], learning_rate=GPT_DEFAULTS["learning_rate"], seed=GPT_DEFAULTS["seed"],
            tokens="bytes", corpus="glossary", text="", upload=None, vocab_size=GPT_DEFAULTS["vocab_size"],
            request: gr.Request = None):
    """/train_gpt: train a tiny GPT from scratch; streams the loss and samples; returns JSON at the end."""
    sid = _session(request)
    losses, evals, total, entropy = [], [], None, None
    skip = gr.update()
    for ev in train_gpt_iter(sid, corpus, text, file_path(upload), tokens, vocab_size, steps, layers, heads, width,
                             learning_rate=learning_rate, seed=seed):
        kind = ev["event"]
        if kind == "plan":
            total, entropy = ev["steps"], ev["unigram_entropy"]
            yield (f"*Training: {ev['parameters']:,} parameters on {md_text(ev['corpus'])} ({ev['tokens']:,} tokens); "
                   "press Stop to keep the model trained so far.*", skip, skip, skip, skip)
            continue
        if kind == "step":
            losses += ev["losses"]
        elif kind == "eval":
            evals.append(ev)
        elif kind == "done":
            r = ev["result"]
            yield (final_md(r), gpt_loss_figure(r["losses"], r["evals"], total, r["unigram_entropy"]),
                   _samples_md(r["evals"]), gr.update(interactive=True), r)
            return
        status = (f"*Step {len(losses):,}/{total:,}, loss {losses[-1]:.3f}*" if losses else "*Step 0*")
        yield (status, gpt_loss_figure(losses, evals, total, entropy), _samples_md(evals) if kind == "eval" else skip,
               skip, skip)


def stop(request: gr.Request):
    return stop_said(stop_gpt, getattr(request, "session_hash", None),
                     "*Stopping after the current step; the model trained so far is kept...*")


@user_errors
def download(request: gr.Request = None):
    """/download_gpt: the session's tiny GPT as a zip of a save_pretrained folder (+ tokenizer, model card)."""
    r = export_gpt(_session(request), root=download_root())
    return served(r["path"]), zip_line(r)


def drop_session(request: gr.Request):
    drop_gpt_session(getattr(request, "session_hash", None) if request is not None else None)


def _controls():
    with gr.Row():
        steps = Slider(10, 2000, value=GPT_DEFAULTS["steps"], step=10, label="Training steps", elem_id="scratch-gpt-steps")
        layers = Slider(1, 6, value=GPT_DEFAULTS["layers"], step=1, label="Layers", elem_id="scratch-gpt-layers")
        width = Dropdown(WIDTHS, value=GPT_DEFAULTS["width"], label="Width (embedding size)", elem_id="scratch-gpt-width")
        heads = Dropdown([1, 2, 4, 8], value=GPT_DEFAULTS["heads"], label="Heads", elem_id="scratch-gpt-heads")
    with gr.Row():
        lr = Number(GPT_DEFAULTS["learning_rate"], label="Learning rate (AdamW)", elem_id="scratch-gpt-lr")
        seed = Number(GPT_DEFAULTS["seed"], label="Seed", precision=0, elem_id="scratch-gpt-seed")
        tokens = Radio(TOKENS, value="bytes", label="Tokens", elem_id="scratch-gpt-tokens")
    return [steps, layers, width, heads, lr, seed, tokens]


def build(corpus, text, upload, vocab) -> None:
    """The tiny-GPT section; `corpus`, `text`, `upload` and `vocab` are the tokenizer section's inputs."""
    gr.Markdown(INTRO, elem_id="scratch-gpt-intro")
    controls = _controls()
    plan_md = gr.Markdown(show_plan(*[c.value for c in controls], vocab.value), elem_id="scratch-gpt-plan")
    with gr.Row():
        go = gr.Button("Train tiny GPT", variant="primary", elem_id="scratch-gpt-go")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="scratch-gpt-stop")
    box = error_box(elem_id="scratch-gpt-error")
    status = gr.Markdown(elem_id="scratch-gpt-status")
    with gr.Row():
        plot = gr.Plot(label="Loss", elem_id="scratch-gpt-loss")
        with gr.Column():
            gr.Markdown("**Samples** (newest first; 80 tokens after the validation text's first token)")
            samples = gr.HTML(elem_id="scratch-gpt-samples")
    with gr.Row():
        dl_btn = gr.Button("Download (zip: save_pretrained folder + tokenizer + model card)", interactive=False,
                           elem_id="scratch-gpt-download")
        dl_file = gr.File(label="Your tiny GPT", visible=False, interactive=False, elem_id="scratch-gpt-file")
    dl_md = gr.Markdown(elem_id="scratch-gpt-download-status")
    gr.Markdown("**Look inside it.** The same tabs that take apart the real models take this one: Anatomy "
                "recomputes each block from its weights, Decoding shows each step's candidates. They open with "
                "the model box holding this session's tiny GPT (it works only in this page, as long as the model "
                "lives).", elem_id="scratch-gpt-inside-intro")
    with gr.Row():
        inside_prompt = gr.Textbox("The attention", label="Text to look at", max_lines=2, scale=3,
                                   elem_id="scratch-gpt-inside-text")
        # The model's name for the model box (hub.session_models), filled once a model is trained.
        model_name = gr.Textbox("", visible=False, elem_id="scratch-gpt-model-name")
        links.handoff("Open it in Anatomy", inside_prompt, "anatomy", "text", model=model_name, role="decoder",
                      text_b="")
        if links.has_model_box("decoding"):
            links.handoff("Open it in Decoding", inside_prompt, "decoding", "prompt", model=model_name)
    out_json = raw_json("Raw result (JSON: what /train_gpt returns)", elem_id="scratch-gpt-json")
    plan_inputs = controls + [vocab]
    for widget in plan_inputs:
        widget.change(show_plan, plan_inputs, [plan_md], api_visibility="private", queue=False)
    outputs = [status, plot, samples, dl_btn, out_json]
    ev = go.click(run_gpt, controls + [corpus, text, upload, vocab], outputs, api_name="train_gpt", **LANE)
    clear_on_error(ev, [plot, samples, out_json], box)
    runs.track(runs.panel("scratch-gpt", link="scratch"), ev, [status, plot, samples])  # the tab has no link yet
    ev.then(show_plan, plan_inputs, [plan_md], api_visibility="private")  # now from the rate just measured
    lifecycle.after(ev, "success", lambda r: (r or {}).get("model_box", ""), [out_json], [model_name])
    stop_btn.click(stop, None, [status], api_visibility="private", queue=False)
    ev = dl_btn.click(download, None, [dl_file, dl_md], api_name="download_gpt")
    clear_on_error(ev, [dl_file, dl_md], box)
    lifecycle.after(ev, "success", lambda: gr.update(visible=True), None, [dl_file])
    root = gr.context.Context.root_block
    if root is not None:
        root.unload(drop_session)
