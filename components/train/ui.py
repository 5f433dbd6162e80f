"""The Train tab: train a classifier three ways on the same split and compare them (the book's
chapters 2 and 9): zero-shot by embedding similarity, feature extraction + logistic
regression, and fine-tuning; then use the trained model on your own text.

The trained model belongs to the caller's Gradio session (`gr.Request.session_hash`), like a
search index; the backend keeps it, bounded by idle eviction and a memory budget. "Use in
Pipelines" makes it this session's Classify model; "Download" zips it as a save_pretrained folder.
Inputs are common's tolerant widgets: the backend checks every value and names the parameter.
"""

from __future__ import annotations

import html

import gradio as gr

import backend.train as training
from backend.train.contracts import CONTRACTS
from backend.runtime import config
from backend.runtime.errors import LabError
from components import shell as common
from components.shell import (SHORT_LANE, Checkbox, CheckboxGroup, Dropdown, File, Number, Radio, Slider, Textbox,
                               error_box, file_path, md_text, model_badge, raw_json)
from components.shell import code_view, gradio_patches, lifecycle, links, runs
from components.shell.endpoint import After, Endpoint, Link, Runs, declare, declare_link
from components.shell.badge import model_time
from components.train import ner as train_ner
from components.train.plots import METHOD_LABELS, confusion_figure, curve_figure, loss_figure, map_figure
from components.shell.guard import Selection
from components.shell.session_memory import download_root, served
from components.shell.session import session_of, stop_said

LANE = getattr(common, "LONG_LANE", SHORT_LANE)  # training is long work: it queues with other long jobs
DATASET_CHOICES = [("Emotion: 6 labels, 630 sentences (shipped)", "emotion"),
                   ("Sentiment: positive / negative / neutral, 544 sentences (shipped)", "sentiment"),
                   ("Upload a CSV or JSONL file (text + label columns)", "upload")]
METHOD_CHOICES = [(METHOD_LABELS[m], m) for m in training.METHODS]
PREDICT_CHOICES = [("best of this session", ""), ("features + logistic regression", "probe"),
                   ("fine-tuned", "finetune")]
HARDEST_HEADERS = ["true", "predicted", "loss", "method", "text"]
EXAMPLES = ["I can't believe they cancelled the concert an hour before it started!",
            "My little boy drew me a card that says I'm the best mum in the world.",
            "The battery died after two days and support never answered."]


def _session(request: gr.Request | None) -> str:
    return session_of(request, "the Train tab's model")


SMALL_SAMPLE = 30  # the backend's classification_metrics.SMALL_SAMPLE: below it, a count and an interval


def accuracy_text(acc: float, n: int | None = None, ci95: list | None = None, digits: int = 3) -> str:
    """An accuracy as shown: on fewer than 30 examples with its count and 95% (Wilson) interval."""
    if acc is None:  # a fine-tune stopped before its test pass
        return "not measured (stopped before the test pass)"
    text = f"{acc:.{digits}f}"
    if n is not None and n < SMALL_SAMPLE:
        text += f" (n={n}" + (f", 95% CI {ci95[0]:.2f}-{ci95[1]:.2f}" if ci95 else "") + ")"
    return text


def seconds_text(s: float) -> str:
    """Seconds as shown: whole ones from 10 s, one decimal below (a 0.4 s run is not "0 s")."""
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


def estimate_line(e: dict) -> str:
    """Before or after the first fine-tuning chunk: steps, seconds, and whether the budget holds them."""
    head = (f"{e['steps']} step{'' if e['steps'] == 1 else 's'} at {e['seconds_per_step']:.2f} s + "
            f"{e['validation_passes']} validation pass{'' if e['validation_passes'] == 1 else 'es'} of "
            f"{e['validation_s']:.1f} s ≈ **{seconds_text(e['estimated_s'])}** ({e['basis']})")
    if e["fits_budget"]:
        return f"{head}, within the {e['budget_s']:.0f} s budget."
    return f"{head}: **over** the {e['budget_s']:.0f} s budget. {e['advice']}"


def done_line(r: dict) -> str:
    """After the run: how long it took against the estimate shown before it."""
    est = r.get("estimate") or {}
    if est.get("estimated_s") is None:
        return f"Done: {model_time(r['seconds'])}."
    if est.get("off"):
        return f"Done: {model_time(r['seconds'])}. **Estimate off:** {md_text(est['message'])}"
    return f"Done: {model_time(r['seconds'])} (estimated {seconds_text(est['estimated_s'])} before it started)."


def summary_markdown(result: dict) -> str:
    ds = result["dataset"]
    sizes = ds["sizes"]
    lines = [f"### {html.escape(ds['name'])}: {len(ds['labels'])} labels, "
             f"{sizes['train']} train / {sizes['validation']} validation / {sizes['test']} test",
             "| method | test accuracy | macro-F1 | time and notes |", "|---|---|---|---|"]
    for m, r in result["methods"].items():
        if m == "zero_shot":
            t, note = f"{r['seconds']:.1f} s", f"template `{r['template']}`"
        elif m == "probe":
            t, note = f"fit {r['fit_s']:.2f} s", f"features {r['features_s']:.1f} s"
        else:
            t = f"{r['seconds']:.1f} s"
            note = f"{r['steps']}/{r['total_steps']} steps, {r['stopped']}"
            if r.get("best_epoch") is not None:
                note += (f", best checkpoint at epoch {r['best_epoch']}" if r.get("best_validation")
                         else f", kept as it was at epoch {r['best_epoch']} (stopped before any validation)")
            vs = r.get("vs_plan") or {}
            if vs.get("off"):
                note += f"; estimated {seconds_text(vs['estimated_s'])}"
            if r.get("test_skipped"):  # Stop skips the test pass: the row says so rather than show a blank
                note += "; test pass skipped after Stop, so no test score"
        acc = accuracy_text(r["accuracy"], r.get("n"), r.get("ci95")) if "accuracy" in r else "-"
        f1 = f"{r['macro_f1']:.3f}" if "macro_f1" in r else "-"
        best = " **(in use)**" if m == result.get("best_method") else ""
        lines.append(f"| {METHOD_LABELS[m]}{best} | {acc} | {f1} | {t}; {html.escape(note)} |")
    notes = list(ds.get("notes", [])) + list(result.get("notes", []))
    lines += [f"\n> {html.escape(n)}" for n in notes]
    return "\n".join(lines)


def hardest_rows(result: dict) -> list[list]:
    return [[h["true"], h["predicted"], f"{h['loss']:.2f}", METHOD_LABELS[m], h["text"]]
            for m, rows in result.get("hardest", {}).items() for h in rows]


# ------------------------------------------------------------------------- handlers
def run_training(dataset, file, text_column, label_column, methods, epochs, max_examples, max_seconds,
                 learning_rate, batch_size, learning_curve, curve_finetune, seed,
                 request: gr.Request, progress=gr.Progress()):
    sid = _session(request)
    losses, epochs_seen, total = [], [], None
    skip = gr.update()
    for ev in training.train_iter(sid, dataset, file_path(file), text_column, label_column, methods,
                                  epochs, max_examples, max_seconds, learning_rate, batch_size,
                                  learning_curve, curve_finetune, seed, progress=progress):
        kind = ev["event"]
        if kind == "stage":
            yield f"*{html.escape(ev['desc'])}...*", skip, skip, skip, skip, skip, skip, skip, skip
        elif kind == "estimate":
            yield (f"Fine-tuning: {estimate_line(ev)}", skip, skip, skip, skip, skip, skip, skip, skip)
        elif kind in ("step", "epoch"):
            if kind == "step":
                losses += ev["losses"]
                total = ev["total_steps"]
            else:
                epochs_seen.append(ev)
            status = (f"*Fine-tuning: step {len(losses)}/{total}, loss {losses[-1]:.3f}"
                      + (", validation accuracy " + accuracy_text(epochs_seen[-1]["val_accuracy"],
                                                                   epochs_seen[-1].get("val_n"),
                                                                   epochs_seen[-1].get("val_ci95"))
                         if epochs_seen else "")
                      + " · press Stop to keep the best checkpoint so far.*")
            yield status, skip, shown(loss_figure(losses, epochs_seen, total)), skip, skip, skip, skip, skip, skip
        elif kind == "done":
            r = ev["result"]
            ft = r["methods"].get("finetune")
            loss = loss_figure(ft["losses"], ft["epochs"], ft["total_steps"]) if ft else None
            status = (done_line(r) + " " + model_badge(r["model"]) +
                      (f" · the session now classifies with **{METHOD_LABELS[r['best_method']]}**"
                       if r.get("best_method") else ""))
            yield (status, summary_markdown(r), shown(loss), shown(confusion_figure(r["methods"])),
                   shown(map_figure(r["map"])), shown(map_figure(r.get("map_finetuned"))),
                   shown(curve_figure(r.get("learning_curve"))), hardest_rows(r), r)


def shown(fig):
    """A plot of what ran; hidden (and emptied: no stale figure) for a method that did not run."""
    return gr.update(value=fig, visible=True) if fig is not None else gr.update(value=None, visible=False)


def stop_training(request: gr.Request):
    """Set the session's stop flag: fine-tuning ends after its current chunk, keeping its best checkpoint."""
    return stop_said(training.stop, getattr(request, "session_hash", None),
                     "*Stopping after the current chunk; the best checkpoint so far is kept...*")


def hardest_text(evt: Selection):
    """A click on a highest-loss validation row puts its text in the try box ("Why?" then explains it)."""
    row = evt.row_value or []
    return row[-1] if row else gr.skip()


def predict(text, method, request: gr.Request):
    r = training.predict_trained(_session(request), text, method or "")
    m = r["model"]
    rows = "".join(f"<tr><td>{html.escape(l)}</td><td>{s:.3f}</td>"
                   f"<td><span style='display:inline-block;height:9px;width:{s * 160:.0f}px;"
                   f"background:#e07b14;border-radius:3px'></span></td></tr>"
                   for l, s in zip(r["labels"], r["scores"]))
    md = (f"<div id='train-prediction'><b>{html.escape(r['label'])}</b> "
          f"<i>by {html.escape(r['method_name'])}, {html.escape(config.method_name(config.METHOD_SESSION))}, on {html.escape(m['trained_on'])} "
          f"(test accuracy {accuracy_text(m['test_accuracy'], m.get('test_n'), m.get('test_ci95'))}) "
          f"over {html.escape(m['checkpoint'])}</i>"
          f"<table>{rows}</table></div>")
    return md, r


def use_in_pipelines(on, method, request: gr.Request):
    """Make (or stop making) this session's trained classifier its Pipelines' Classify model."""
    r = training.use_trained(_session(request), on, method or "")
    note = (f"**In use in Pipelines** (Classify, this session only): {md_text(r['model']['checkpoint'])}, "
            f"{md_text(r['model']['classifier'])}. Untick to go back to the profile's model."
            if r["in_use"] else "Pipelines' Classify uses the profile's model.")
    return note, r


def download(method, request: gr.Request):
    """The session's classifier as a zip: a save_pretrained folder and a model card."""
    # Written inside Gradio's file cache, so Gradio serves this file instead of keeping a copy
    # that would outlive the session.
    r = training.export(_session(request), method or "", root=download_root())
    m = r["model"]
    note = (f"`{md_text(r['path'].rsplit('/', 1)[-1])}`: {r['megabytes']} MB, {md_text(m['classifier'])}, "
            f"test accuracy {accuracy_text(m['test_accuracy'], m.get('test_n'), m.get('test_ci95'))}; files: {md_text(', '.join(r['files']))}.")
    return served(r["path"]), note


def show_estimate(dataset, file, text_column, label_column, epochs, max_examples, max_seconds,
                  methods=None, batch_size=16, learning_curve=True, curve_finetune=False, seed=0):
    """Before training: how long the whole run should take, part by part, and whether fine-tuning
    fits its budget (no model runs; a bad upload is named)."""
    if dataset == "upload" and not file_path(file):
        return "*Upload a .csv or .jsonl file with a text and a label column.*"
    try:
        e = training.estimate(dataset, file_path(file), text_column, label_column, epochs, max_examples,
                              max_seconds, methods=training.METHODS if methods is None else methods,
                              batch_size=batch_size, learning_curve=learning_curve,
                              curve_finetune=curve_finetune, seed=seed)
    except LabError as exc:  # shown in the box, not raised: this runs on every slider move
        return f"**Cannot train on this data:** {html.escape(str(exc))}"
    sizes = e["dataset"]["sizes"]
    parts = ", ".join(f"{p['what']} {seconds_text(p['estimated_s'])}" for p in e["parts"] if p["estimated_s"] >= 0.05)
    text = (f"{sizes['train']} train / {sizes['validation']} validation / {sizes['test']} test examples, "
            f"labels: {', '.join(e['dataset']['labels'])}. The whole run: about **{seconds_text(e['seconds'])}** "
            f"({md_text(e['basis'])})" + (f": {parts}" if parts else "") + ".")
    ft = e["finetune"]
    if ft is not None:
        text += (f"\n\nFine-tuning {e['examples']} examples x {e['epochs']} epoch{'' if e['epochs'] == 1 else 's'}: "
                 + estimate_line(ft))
    return text


def drop_session(request: gr.Request):
    sid = getattr(request, "session_hash", None) if request is not None else None
    training.drop_session(sid)


# ------------------------------------------------------------------------- layout
TASK_CHOICES = [("Sentence classification (chapters 2 and 9)", "classify"),
                ("Token classification: named entities (chapter 4)", "ner")]


LINK_NOTE = ("A link to this tab (after a run, above) reopens it with the same data and settings but does not "
             "train: training takes a while, so press **Train** yourself. An uploaded file is never in a link.")
LINK_DATASETS = tuple(value for _, value in DATASET_CHOICES if value != "upload")
TRAIN_NAMES = ("dataset", "file", "text_column", "label_column", "methods", "epochs", "max_examples", "max_seconds",
               "learning_rate", "batch_size", "learning_curve", "curve_finetune", "seed")  # /train's arguments
_PAGE = {k: v for k, v in lifecycle.PAGE_ONLY.items() if k != "api_visibility"}  # a private declaration's own


def build() -> None:
    task = Radio(TASK_CHOICES, value="classify", label="Task", elem_id="train-task")
    with gr.Column(visible=True) as classify_col:
        link = _build_classify(task)
    with gr.Column(visible=False) as ner_col:
        ner_estimate, ner_inputs, ner_estimate_md, ner_link = train_ner.build()
    register_links(*link, *ner_link)
    task.change(lambda t: (gr.update(visible=t == "classify"), gr.update(visible=t == "ner")), [task],
                [classify_col, ner_col], api_visibility="private", queue=False)
    task.change(lambda t, *args: ner_estimate(*args) if t == "ner" else gr.update(), [task, *ner_inputs],
                [ner_estimate_md], api_visibility="private")


def register_links(inputs: dict, train_ev, link_bar, results: list, ner_ev, ner_params: dict, ner_bar,
                   ner_results: list) -> None:
    """One link for the tab (task, data, settings of both tasks). Training a classifier writes it
    into the classifier's bar; training NER into the NER column's own bar (the other is hidden). A link
    reopened blanks both tasks' results and code views: an old run must not stand beside new settings."""
    declare_link(Link("train", link_bar, params={**inputs, **ner_params}, results=[*results, *ner_results]),
                 [train_ev], more=[(ner_ev, ner_bar)])


def _use_and_download():
    """Use the trained classifier in Pipelines (this session), or download it as a zip."""
    with gr.Row():
        use_box = Checkbox(False, label="Use in Pipelines (this session's Classify task)",
                           elem_id="train-use")
        download_btn = gr.Button("Download (zip: save_pretrained folder + model card)",
                                 elem_id="train-download")
    use_md = gr.Markdown(elem_id="train-use-status")
    use_json = gr.JSON(visible=False)
    download_file = gr.File(label="Your classifier", visible=False, interactive=False,
                            elem_id="train-download-file")
    download_md = gr.Markdown(elem_id="train-download-status")
    return use_box, download_btn, use_md, use_json, download_file, download_md


INTRO = (
    "## Train a classifier\n"
    "Three ways to turn a transformer into a classifier, compared on the same split (the book's "
    "chapters 2 and 9): **zero-shot** by similarity to the label names (no training), **feature "
    "extraction** (the frozen encoder's mean-pooled hidden states into a logistic regression), and "
    "**fine-tuning** the whole encoder with a classification head. The trained model stays in your "
    "session only.")


def _settings_column():
    """The data, the methods, the fine-tuning budget and the learning curve; Train and Stop."""
    with gr.Column(scale=1):
        dataset = Radio(DATASET_CHOICES, value="emotion", label="Data", elem_id="train-dataset")
        file = File(label="Upload (.csv, .tsv, .jsonl)", file_types=[".csv", ".tsv", ".jsonl"],
                    type="filepath", value=None, elem_id="train-file")
        with gr.Row():
            text_column = Textbox(label="Text column", placeholder="text", value="")
            label_column = Textbox(label="Label column", placeholder="label", value="")
        methods = CheckboxGroup(METHOD_CHOICES, value=list(training.METHODS), label="Methods",
                                elem_id="train-methods")
        with gr.Accordion("Fine-tuning budget", open=False):
            epochs = Slider(1, 10, value=3, step=1, label="Epochs", elem_id="train-epochs")
            max_examples = Slider(16, 5000, value=2000, step=16, label="Max training examples",
                                  elem_id="train-max-examples")
            max_seconds = Slider(5, 600, value=60, step=5, label="Max seconds", elem_id="train-seconds")
            learning_rate = Number(value=1e-4, label="Learning rate (AdamW, linear decay)")
            batch_size = Slider(2, 64, value=16, step=2, label="Batch size")
            seed = Number(value=0, precision=0, label="Seed")
        learning_curve = Checkbox(True, label="Learning curve (8 / 16 / 32 / 64 / 128 per label, all)")
        curve_finetune = Checkbox(False, label="...with fine-tuning on the curve (one run per point)")
        estimate_md = gr.Markdown(elem_id="train-estimate")
        with gr.Row():
            train_btn = gr.Button("Train", variant="primary", elem_id="train-go")
            stop_btn = gr.Button("Stop", variant="stop", elem_id="train-stop")
    return (dataset, file, text_column, label_column, methods, epochs, max_examples, max_seconds, learning_rate, batch_size,
            seed, learning_curve, curve_finetune, estimate_md, train_btn, stop_btn)


def _build_classify(task) -> tuple:
    gr.Markdown(INTRO)
    with gr.Row():
        (dataset, file, text_column, label_column, methods, epochs, max_examples, max_seconds, learning_rate, batch_size,
         seed, learning_curve, curve_finetune, estimate_md, train_btn, stop_btn) = _settings_column()
        with gr.Column(scale=2):
            status = gr.Markdown(elem_id="train-status")
            link_bar = links.bar("train")  # training is not cheap: a link restores the settings, never runs
            gr.Markdown(LINK_NOTE, elem_id="train-link-note", elem_classes=["tlab-link-note"])
            train_box = error_box("train-error")
            summary = gr.Markdown(elem_id="train-summary")
            loss_plot = gr.Plot(label="Loss", elem_id="train-loss")
            confusion_plot = gr.Plot(label="Confusion matrices", elem_id="train-confusion")
            with gr.Row():
                map_plot = gr.Plot(label="Hidden states of the frozen encoder (PCA)", elem_id="train-map")
                map_ft_plot = gr.Plot(label="...and after fine-tuning", elem_id="train-map-finetuned")
            curve_plot = gr.Plot(label="Learning curve", elem_id="train-curve")
            hardest = gr.Dataframe(headers=HARDEST_HEADERS, label="Validation examples with the highest loss",
                                   interactive=False, wrap=True, column_widths=["12%", "14%", "8%", "22%", "44%"],
                                   elem_id="train-hardest")
            result_json = raw_json("Raw result (JSON: what /train returns)", elem_id="train-json")
            code = code_view.view("train")  # "The same in Python", under the raw result
            kept = runs.panel("train")  # two trainings (before and after a change) side by side
            with gr.Group():
                text = Textbox(label="Try the trained model", elem_id="train-text", placeholder=EXAMPLES[0])
                with gr.Row():
                    method = Dropdown(PREDICT_CHOICES, value="", label="Classifier", elem_id="train-method")
                    predict_btn = gr.Button("Classify", elem_id="train-predict")
                    links.handoff("Why? (which words it rests on)", text, "why", "text", task="session")
                gr.Examples([[e] for e in EXAMPLES], inputs=[text])
            predict_box = error_box("train-predict-error")
            prediction = gr.HTML(elem_id="train-prediction-box")
            prediction_json = raw_json("Raw result (JSON: what /predict_trained returns)",
                                       elem_id="train-prediction-json")
            use_box, download_btn, use_md, use_json, download_file, download_md = _use_and_download()

    estimate_inputs = [dataset, file, text_column, label_column, epochs, max_examples, max_seconds, methods,
                       batch_size, learning_curve, curve_finetune, seed]
    # One listener for every setting and the page's load, answering the newest: separate listeners could
    # answer out of order (the load's estimate for the first dataset arrived after the one for the dataset
    # just picked, and stayed on screen).
    root = gradio_patches.page_being_built()
    gr.on([*([root.load] if root is not None else []),
           *(w.change for w in (dataset, file, epochs, max_examples, max_seconds, methods, batch_size,
                                learning_curve, curve_finetune, seed))],
          show_estimate, estimate_inputs, [estimate_md], api_visibility="private", trigger_mode="always_last")
    file.upload(lambda: "upload", None, [dataset], api_visibility="private")
    train_inputs = [dataset, file, text_column, label_column, methods, epochs, max_examples, max_seconds,
                    learning_rate, batch_size, learning_curve, curve_finetune, seed]
    train_outputs = [status, summary, loss_plot, confusion_plot, map_plot, map_ft_plot, curve_plot, hardest,
                     result_json]
    # A new model: Pipelines goes back to the profile's (the backend did), and the old zip is gone.
    reset = After("success", lambda: (False, "", gr.update(value=None, visible=False), ""), None,
                  [use_box, use_md, download_file, download_md])
    (ev,) = declare(Endpoint(  # its link is declared by build, with NER's settings; runs wired once it is
        "train", run_training, dict(zip(TRAIN_NAMES, train_inputs)), train_outputs, trigger=train_btn, lane=LANE,
        errors=train_box, after=[reset], result=result_json, code=code,
        runs=Runs(kept, [status, summary, confusion_plot, curve_plot]), contract=CONTRACTS["train"]))
    link = ({"task": task, "dataset": (dataset, LINK_DATASETS), "text_column": text_column,
             "label_column": label_column, "methods": methods, "epochs": epochs,
             "max_examples": max_examples, "max_seconds": max_seconds, "learning_rate": learning_rate,
             "batch_size": batch_size, "learning_curve": learning_curve,
             "curve_finetune": curve_finetune, "seed": seed}, ev, link_bar,
            train_outputs + code.outputs)  # registered by build, with NER's
    ev.then(show_estimate, estimate_inputs, [estimate_md], api_visibility="private")  # now from the rates just measured
    stop_btn.click(stop_training, None, [status], api_visibility="private", queue=False)
    declare(Endpoint(None, hardest_text, {}, [text], trigger=hardest.select, options=_PAGE))
    declare(Endpoint("predict_trained", predict, {"text": text, "method": method}, [prediction, prediction_json],
                     trigger=predict_btn, also=[text.submit], lane=SHORT_LANE, errors=predict_box, contract=CONTRACTS["predict_trained"]))
    declare(Endpoint("use_trained", use_in_pipelines, {"on": use_box, "method": method}, [use_md, use_json],
                     trigger=use_box.input, errors=predict_box, cleared=[use_md],
                     after=[After("failure", lambda: False, None, [use_box])], contract=CONTRACTS["use_trained"]))
    declare(Endpoint("download_trained", download, {"method": method}, [download_file, download_md],
                     trigger=download_btn, lane=SHORT_LANE, errors=predict_box,
                     after=[After("success", lambda: gr.update(visible=True), None, [download_file])], contract=CONTRACTS["download_trained"]))
    if root is not None:
        root.unload(drop_session)
    return link
