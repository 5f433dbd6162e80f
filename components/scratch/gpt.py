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

from backend.scratch.contracts import CONTRACTS
from backend.scratch import (GPT_DEFAULTS, drop_gpt_session, export_gpt, plan_gpt, stop_gpt, train_gpt_iter)
from components import shell as common
from components.shell import code_view, links, runs
from components.shell import SHORT_LANE, Radio, file_path, md_text, raw_json
from components.shell.endpoint import After, Endpoint, Runs, declare
from components.scratch import trained
from components.scratch.plots import gpt_loss_figure
from components.scratch.trained import after_stop

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
TOKENS = [("Bytes (256 tokens: every UTF-8 byte)", "bytes"), ("The BPE above (retrained at its vocabulary size)", "bpe")]
WIDTHS = [32, 64, 96, 128, 192, 256]
TRAIN_NAMES = ("steps", "layers", "width", "heads", "learning_rate", "seed", "tokens", "corpus", "text", "upload",
               "vocab_size")  # /train_gpt's arguments
INTRO = (
    "### Chapter 10: a tiny GPT trained from scratch\n"
    "The book's last step: a GPT-2 architecture with **random weights**, trained on the text above to predict the "
    "next token. This one is tiny (a few layers, a small width, a context of 64 tokens) so it trains in a minute on "
    "a small CPU. Watch the loss fall and the samples go from random bytes to letters, then to words. The dashed "
    "line is the loss of the best model that ignores context (the text's unigram entropy): below it, the model "
    "uses what came before.")


MODEL = trained.SessionModel("the tiny GPT", stop_gpt, export_gpt, drop_gpt_session)


def _samples_md(evals: list[dict]) -> str:
    """Each sample labelled with its step (newest first), as preformatted text (no markdown in it)."""
    rows = [f"<div class='gpt-sample'><b>step {e['step']:,}</b> (validation loss {e['val_loss']:.3f})"
            f"<pre style='white-space:pre-wrap;margin:2px 0 8px'>{html.escape(e['sample'])}</pre></div>"
            for e in reversed(evals)]
    return "<div id='scratch-gpt-samples-list'>" + "".join(rows) + "</div>"


def plan_line(p: dict) -> str:
    return trained.plan_line(p, "GPT", "and samples")


def show_plan(steps, layers, width, heads, learning_rate, seed, tokens, vocab):
    """Before training: the plan, from the settings alone (no model runs); an error is shown, not raised."""
    return trained.said_plan(lambda: plan_gpt(tokens, vocab, steps, layers, heads, width, learning_rate=learning_rate,
                                              seed=seed), plan_line)


def final_md(r: dict) -> str:
    f = r["final"]
    below = ("below" if f["val_loss"] is not None and f["val_loss"] < r["unigram_entropy"] else "not yet below")
    return (trained.trained_line(r, f"**{r['tokens_per_s']:,.0f} tokens/s**")
            + f", {r['vocab_size']:,} tokens ({md_text(r['tokens'])}). Final train loss **{f['train_loss']}**, "
            f"validation loss **{f['val_loss']}**, {below} the unigram entropy {r['unigram_entropy']} "
            f"{trained.plan_said(r)}.{after_stop(r)}{overfit_line(r)}")


def overfit_line(r: dict) -> str:
    """The run's overfitting verdict (backend.scratch.fit), said when the losses show it."""
    fit = r.get("fit") or {}
    if not fit.get("overfitting"):
        return ""
    return (f" **Overfitting:** {md_text(fit['why'])}: the model is learning its training text by heart, not the "
            f"language. The model at step {fit['best_step']:,} generalised best; fewer steps, a smaller model or "
            "more text would help.")


def run_gpt(steps=GPT_DEFAULTS["steps"], layers=GPT_DEFAULTS["layers"], width=GPT_DEFAULTS["width"],
            heads=GPT_DEFAULTS["heads"], learning_rate=GPT_DEFAULTS["learning_rate"], seed=GPT_DEFAULTS["seed"],
            tokens="bytes", corpus="glossary", text="", upload=None, vocab_size=GPT_DEFAULTS["vocab_size"],
            request: gr.Request = None):
    """/train_gpt: train a tiny GPT from scratch; streams the loss and samples; returns JSON at the end."""
    events = train_gpt_iter(MODEL.session(request), corpus, text, file_path(upload), tokens, vocab_size, steps, layers,
                            heads, width, learning_rate=learning_rate, seed=seed)
    yield from trained.stream(events, _trained_on, _figure, _samples_md, _done, 5)


def _trained_on(plan: dict) -> str:
    return f"{md_text(plan['corpus'])} ({plan['tokens']:,} tokens)"


def _figure(losses: list, evals: list, plan: dict):
    return gpt_loss_figure(losses, evals, plan.get("steps"), plan.get("unigram_entropy"))


def _done(r: dict, plan: dict) -> tuple:
    return (final_md(r), gpt_loss_figure(r["losses"], r["evals"], plan.get("steps"), r["unigram_entropy"]),
            _samples_md(r["evals"]), gr.update(interactive=True), r)


def download(request: gr.Request = None):
    """/download_gpt: the session's tiny GPT as a zip of a save_pretrained folder (+ tokenizer, model card)."""
    return MODEL.zipped(request)


def _controls():
    with gr.Row():
        steps, layers, width, heads = trained.size_controls("gpt", GPT_DEFAULTS, 6, "Layers", WIDTHS)
    with gr.Row():
        lr, seed = trained.optimiser_controls("gpt", GPT_DEFAULTS)
        tokens = Radio(TOKENS, value="bytes", label="Tokens", elem_id="scratch-gpt-tokens")
    return [steps, layers, width, heads, lr, seed, tokens]


def build(corpus, text, upload, vocab) -> None:
    """The tiny-GPT section; `corpus`, `text`, `upload` and `vocab` are the tokenizer section's inputs."""
    gr.Markdown(INTRO, elem_id="scratch-gpt-intro")
    controls = _controls()
    plan_md = gr.Markdown(show_plan(*[c.value for c in controls], vocab.value), elem_id="scratch-gpt-plan")
    go, stop_btn, box, status = trained.train_row("gpt", "Train tiny GPT")
    with gr.Row():
        plot = gr.Plot(label="Loss", elem_id="scratch-gpt-loss")
        with gr.Column():
            gr.Markdown("**Samples** (newest first; 80 tokens after the validation text's first token)")
            samples = gr.HTML(elem_id="scratch-gpt-samples")
    dl = trained.download_row("gpt", "Your tiny GPT")
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
    code = code_view.view("scratch-gpt")  # "The same in Python", under the raw result
    plan_inputs = controls + [vocab]
    # One listener answering the newest setting (one per setting answered out of order: layers' plan, asked
    # before the steps changed, could land after the steps' and show the old step count).
    gr.on([w.change for w in plan_inputs], show_plan, plan_inputs, [plan_md], api_visibility="private", queue=False,
          trigger_mode="always_last")
    outputs = [status, plot, samples, dl[0], out_json]
    kept = runs.panel("scratch-gpt", link="scratch")  # the tab has no link yet
    model_box = After("success", lambda r: (r or {}).get("model_box", ""), [out_json], [model_name])
    (ev,) = declare(Endpoint(
        "train_gpt", run_gpt, dict(zip(TRAIN_NAMES, controls + [corpus, text, upload, vocab])), outputs, trigger=go,
        lane=LANE, errors=box, cleared=[plot, samples, out_json], after=[model_box], result=out_json, code=code,
        runs=Runs(kept, [status, plot, samples]), contract=CONTRACTS["train_gpt"]))
    ev.then(show_plan, plan_inputs, [plan_md], api_visibility="private")  # now from the rate just measured
    trained.wire(MODEL, "download_gpt", download, stop_btn, status, dl, box)
