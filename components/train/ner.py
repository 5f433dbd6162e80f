"""The Train tab's token-classification (NER) task, the book's chapter 4: fine-tune the encoder
with a linear head per token on the shipped NER set or an upload, for the epochs the learner
chose (the plan is shown before it starts); then seqeval's scores per entity type, the tag
confusion matrix, the highest-loss sentences, and the trained model to try and download.

The model belongs to the caller's session (like the classifiers, and replacing them there).
"""

from __future__ import annotations

import html

import gradio as gr

import backend.train as training
from backend.train.contracts import CONTRACTS
from backend.runtime.errors import LabError
from components import shell as common
from components.shell import (SHORT_LANE, Checkbox, File, Number, Radio, Slider, Textbox, error_box, file_path,
                               md_text, model_badge, raw_json)
from components.shell import code_view, links, runs
from components.shell.endpoint import After, Endpoint, Runs, declare
from components.shell.badge import model_time
from components.shell.session_memory import download_root, served
from components.train.ner_plots import (SCORE_HEADERS, confusion_figure, entities_html, errors_html, loss_figure,
                                        score_rows, scores_figure)
from components.shell.session import session_of, stop_said

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
SOURCE_CHOICES = [("NER set (shipped): PER / ORG / LOC / MISC, news, letters, sport, science, history", "shipped"),
                  ("Upload CoNLL columns (.conll / .txt) or JSONL (tokens + tags, or text + entity spans)", "upload")]
LINK_SOURCES = tuple(value for _, value in SOURCE_CHOICES if value != "upload")  # a link never carries a file
NER_NAMES = ("source", "file", "epochs", "max_sentences", "learning_rate", "batch_size", "word_shapes", "seed")
UPLOAD_TYPES = [".conll", ".txt", ".iob", ".bio", ".tsv", ".jsonl", ".json"]
EXAMPLES = ["Angela Merkel met Emmanuel Macron in Berlin to discuss Airbus.",
            "Serena Williams won the US Open in New York after beating Naomi Osaka.",
            "The European Space Agency launched a probe from French Guiana on Tuesday."]


def _session(request: gr.Request | None) -> str:
    return session_of(request, "the Train tab's model")


def seconds_text(s: float) -> str:
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


def plan_text(e: dict) -> str:
    """The plan before the run: data, steps, seconds per part, the total against the budget."""
    d = e["dataset"]
    sizes = d["sizes"]
    parts = ", ".join(f"{p['what']} {seconds_text(p['estimated_s'])}" for p in e["parts"] if p["estimated_s"] >= 0.05)
    budget = f"the {e['budget_s']:.0f} s request budget" if e["budget_s"] is not None else "no time limit"
    fits = f"within {budget}." if e["fits_budget"] else f"**over** {budget}. {md_text(e['advice'])}"
    return (f"{sizes['train']} train / {sizes['validation']} validation / {sizes['test']} test sentences, types "
            f"{', '.join(d['types'])}. Training on {e['train_sentences']} sentences: {e['epochs']} epoch"
            f"{'' if e['epochs'] == 1 else 's'} x {e['steps_per_epoch']} batches of {e['batch_size']} = "
            f"**{e['steps']} steps** at about {e['seconds_per_step']:.2f} s ≈ **{seconds_text(e['seconds'])}** "
            f"({md_text(e['basis'])}): {parts}; {fits}")


def summary_markdown(r: dict) -> str:
    d, t, v = r["dataset"], r["test"]["overall"], r["validation"]["overall"]
    est = r.get("estimate") or {}
    lines = [f"### {html.escape(d['name'])}: test F1 **{t['f1']:.3f}** (seqeval, entity level, "
             f"{len(r['predictions']['test'])} test sentences, {t['support']} entities)",
             f"{r['steps']} of {r['total_steps']} steps ({r['epochs']} epoch{'' if r['epochs'] == 1 else 's'}, "
             f"{r['train_sentences']} training sentences, batch {r['recipe']['batch_size']}, "
             f"{r['step_s']:.2f} s a step) on `{md_text(r['model']['checkpoint'])}`"
             f"{' + word shapes' if r['recipe']['shape_dim'] else ''}; best epoch {r['best_epoch']} (validation "
             f"F1 {v['f1']:.3f} on {d['sizes']['validation']} sentences). Done: {model_time(r['seconds'])}"
             + (f" (estimated {seconds_text(est['estimated_s'])})." if est.get("estimated_s") else ".")]
    lines += [f"\n> {html.escape(n)}" for n in d.get("notes", [])]
    return "\n".join(lines)


# ------------------------------------------------------------------------- handlers
def run_ner(source, file, epochs, max_sentences, learning_rate, batch_size, word_shapes, seed,
            request: gr.Request, progress=gr.Progress()):
    sid = _session(request)
    skip = gr.update()
    for ev in training.train_ner_iter(sid, source, file_path(file), epochs, max_sentences, learning_rate,
                                      batch_size, word_shapes, seed):
        kind = ev["event"]
        if kind == "estimate":
            progress(0.0, f"Training {ev['steps']} steps")
            yield (f"*Plan: {ev['steps']} steps, about {seconds_text(ev['seconds'])}...*",) + (skip,) * 7
        elif kind == "step":
            progress(ev["step"] / ev["total_steps"], f"step {ev['step']}/{ev['total_steps']}")
            yield (f"*Step {ev['step']}/{ev['total_steps']}, loss {ev['loss']:.3f} · press Stop to end the run "
                   "(no model is kept)*",) + (skip,) * 7
        elif kind == "scoring":
            yield ("*Scoring the best epoch on validation and test...*",) + (skip,) * 7
        elif kind == "done":
            r = ev["result"]
            if r["stopped"]:
                yield (f"**Stopped.** {md_text(r['note'])}", "", None, None, None, None, "", r)
                return
            status = (f"Trained: **{r['steps']} steps** ({model_time(r['seconds'])}) " + model_badge(r["model"]) +
                      " · the session now tags text with this model.")
            yield (status, summary_markdown(r), score_rows(r), scores_figure(r), loss_figure(r), confusion_figure(r),
                   errors_html(r), r)


def stop_ner(request: gr.Request):
    return stop_said(training.stop, getattr(request, "session_hash", None),
                     "*Stopping after the current step (no model is kept)...*")


def tag(text, request: gr.Request):
    p = training.predict_ner(_session(request), text)
    return entities_html(p), p


def download(request: gr.Request):

    r = training.export_ner(_session(request), root=download_root())
    m = r["model"]
    note = (f"`{md_text(r['path'].rsplit('/', 1)[-1])}`: {r['megabytes']} MB, {m['steps']} steps, test F1 "
            f"{m['test_f1']:.3f}; files: {md_text(', '.join(r['files']))}.")
    return gr.update(value=served(r["path"]), visible=True), note


def show_estimate(source, file, epochs, max_sentences, learning_rate, batch_size, word_shapes, seed):
    """Before training (no model runs): the plan, or why this data cannot be trained on."""
    if source == "upload" and not file_path(file):
        return "*Upload CoNLL columns (.conll / .txt) or JSON Lines (.jsonl).*"
    try:
        return plan_text(training.estimate_ner(source, file_path(file), epochs, max_sentences, learning_rate,
                                               batch_size, word_shapes, seed))
    except LabError as exc:
        return f"**Cannot train on this data:** {html.escape(str(exc))}"


# ------------------------------------------------------------------------- layout
def build() -> tuple:
    """The NER task's widgets and events; returns (show_estimate, its inputs, the plan's box) so
    the tab shows the plan when the task is chosen, and (its training event, the settings a link
    restores, its link bar) for the tab's link."""
    gr.Markdown(
        "## Token classification (NER)\nThe book's chapter 4: the encoder reads each sentence, a linear head "
        "tags every word (B-/I- of a type, or O). Only a word's first sub-word piece carries its tag in the "
        "loss. Scores are seqeval's: an entity counts only when its type and its exact words match.")
    with gr.Row():
        with gr.Column(scale=1):
            source = Radio(SOURCE_CHOICES, value="shipped", label="Data", elem_id="train-ner-source")
            file = File(label="Upload (.conll, .txt, .jsonl)", file_types=UPLOAD_TYPES, type="filepath", value=None,
                        elem_id="train-ner-file")
            epochs = Slider(1, training.ner_api.max_epochs(), value=1, step=1, label="Epochs (a fixed number of steps)",
                            elem_id="train-ner-epochs")  # the API's own limit
            max_sentences = Number(value=0, precision=0, label="Max training sentences (0 = all)",
                                   elem_id="train-ner-max-sentences")
            with gr.Accordion("Recipe", open=False):
                learning_rate = Number(value=None, label="Learning rate (empty = the offline NER model's)")
                batch_size = Slider(2, 64, value=16, step=2, label="Batch size")
                word_shapes = Checkbox(True, label="Word-shape embedding (gives the uncased encoder back capitals)")
                seed = Number(value=0, precision=0, label="Seed")
            estimate_md = gr.Markdown(elem_id="train-ner-estimate")
            with gr.Row():
                go = gr.Button("Train NER", variant="primary", elem_id="train-ner-go")
                stop = gr.Button("Stop", variant="stop", elem_id="train-ner-stop")
        with gr.Column(scale=2):
            status = gr.Markdown(elem_id="train-ner-status")
            link_bar = links.bar("train-ner")  # the tab's link, written when NER training ends (see train.ui)
            box = error_box("train-ner-error")
            summary = gr.Markdown(elem_id="train-ner-summary")
            table = gr.Dataframe(headers=SCORE_HEADERS, label="seqeval scores per entity type (test split)",
                                 interactive=False, wrap=True, column_widths=["24%", "15%", "15%", "15%", "16%", "15%"],
                                 elem_id="train-ner-scores")
            bars = gr.Plot(label="Scores per entity type", elem_id="train-ner-bars")
            loss = gr.Plot(label="Loss", elem_id="train-ner-loss")
            confusion = gr.Plot(label="Confusion matrix of word tags", elem_id="train-ner-confusion")
            errors = gr.HTML(elem_id="train-ner-errors")
            result_json = raw_json("Raw result (JSON: what /train_ner returns)", elem_id="train-ner-json")
            code = code_view.view("train-ner")  # "The same in Python": the run in plain torch, under its raw result
            kept = runs.panel("train-ner", link="train")
            with gr.Group():
                text = Textbox(label="Try your NER model", placeholder=EXAMPLES[0], elem_id="train-ner-text")
                tag_btn = gr.Button("Tag", elem_id="train-ner-tag")
                gr.Examples([[e] for e in EXAMPLES], inputs=[text])
            tag_box = error_box("train-ner-tag-error")
            tagged = gr.HTML(elem_id="train-ner-tagged-box")
            tagged_json = raw_json("Raw result (JSON: what /predict_ner returns)", elem_id="train-ner-tagged-json")
            download_btn = gr.Button("Download (zip: encoder folder + head + model card)", elem_id="train-ner-download")
            download_file = gr.File(label="Your NER model", visible=False, interactive=False,
                                    elem_id="train-ner-download-file")
            download_md = gr.Markdown(elem_id="train-ner-download-status")

    inputs = [source, file, epochs, max_sentences, learning_rate, batch_size, word_shapes, seed]
    # One listener answering the newest setting (separate ones could answer out of order: train/ui.py).
    gr.on([w.change for w in (source, file, epochs, max_sentences, batch_size, word_shapes)], show_estimate, inputs,
          [estimate_md], api_visibility="private", trigger_mode="always_last")
    file.upload(lambda: "upload", None, [source], api_visibility="private")
    outputs = [status, summary, table, bars, loss, confusion, errors, result_json]
    (train_ev,) = declare(Endpoint(  # the tab's link: written by train.ui once it is registered, as are the runs
        "train_ner", run_ner, dict(zip(NER_NAMES, inputs)), outputs, trigger=go, lane=LANE, errors=box,
        after=[After("success", lambda: (gr.update(value=None, visible=False), ""), None,
                     [download_file, download_md])],
        runs=Runs(kept, [status, summary, table, bars]), result=result_json, code=code, contract=CONTRACTS["train_ner"]))
    train_ev.then(show_estimate, inputs, [estimate_md], api_visibility="private")  # now at the rates just measured
    stop.click(stop_ner, None, [status], api_visibility="private", queue=False)
    declare(Endpoint("predict_ner", tag, {"text": text}, [tagged, tagged_json], trigger=tag_btn, also=[text.submit],
                     lane=SHORT_LANE, errors=tag_box, contract=CONTRACTS["predict_ner"]))
    declare(Endpoint("download_ner", download, {}, [download_file, download_md], trigger=download_btn,
                     lane=SHORT_LANE, errors=tag_box, contract=CONTRACTS["download_ner"]))
    link_params = {"ner_source": (source, LINK_SOURCES), "ner_epochs": epochs, "ner_max_sentences": max_sentences,
                   "ner_batch_size": batch_size, "ner_word_shapes": word_shapes, "ner_seed": seed}
    return show_estimate, inputs, estimate_md, (train_ev, link_params, link_bar, outputs + code.outputs)
