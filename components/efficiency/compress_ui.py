"""The Efficiency tab's compress section: the book's chapter 8 as one benchmark on the project's
emotion classifier (fine-tuned baseline, distilled student, torch int8, ONNX Runtime, ONNX
Runtime int8, magnitude pruning), run step by step or all at once, with progress and Stop;
the chapter's scatter and table, the pruning curve, every variant on one sentence, downloads.

Formats `backend.efficiency.compress`'s plain results only. Public API: `/compress`, `/compress_predict`,
`/compress_download` (the first output of each is its JSON result)."""

from __future__ import annotations

import logging

import gradio as gr

from backend.efficiency.contracts import CONTRACTS
from backend.efficiency import compress
from components.efficiency import compress_plots as plots
from components.shell import LONG_LANE, SHORT_LANE, Dropdown, Radio, Slider, Textbox, error_box, md_text, raw_json
from components.shell import code_view, links, runs
from components.shell.endpoint import Code, Endpoint, Link, Runs, declare
from components.shell.session_memory import download_root, served
from backend.runtime.errors import InputError

STEP_NAMES = {"teacher": "0 · fine-tuned baseline", "distil": "1 · distil a student", "quantize": "2 · torch int8",
              "onnx": "3 · ONNX Runtime", "onnx_int8": "4 · ONNX Runtime int8", "prune": "5 · prune", "all": "all steps"}
TABLE_HEADERS = ["variant", "accuracy", "latency ms (mean ± std)", "speed-up", "size MB", "size vs baseline"]
TABLE_WIDTHS = ["30%", "12%", "18%", "12%", "14%", "14%"]
PREDICT_HEADERS = ["variant", "label", "probability", "ms"]
INTRO = (
    "### The whole chapter: distil, quantize, export to ONNX, prune\nThe book's chapter 8 benchmarks one "
    "production path on one classifier. Here the classifier is MiniLM fine-tuned on the shipped six-emotion set "
    "(the **baseline**); a **student** keeps some of its layers and learns from its softened outputs "
    "(knowledge distillation: temperature T, weight alpha on the hard labels); then the student is quantized "
    "to int8 in PyTorch, exported to **ONNX** and run by ONNX Runtime, quantized by ONNX Runtime, and pruned. "
    "Every variant is measured the same way: accuracy on the 95 test sentences, latency of one query at "
    "batch 1 (mean ± std), size of its files. The default run was built when the server was set up; "
    "choose *your settings* to run the steps live.")


def table_rows(r: dict) -> list[list]:
    return [[row["variant"], f"{100 * row['accuracy']:.1f}%",
             f"{row['latency_ms_mean']:.2f} ± {row['latency_ms_std']:.2f}",
             f"{row['speedup_vs_baseline']:.2f}x" if row["speedup_vs_baseline"] else "-", f"{row['size_mb']:.1f}",
             f"{row['size_vs_baseline']:.2f}x" if row["size_vs_baseline"] else "-"] for row in r["rows"]]


def _verdict(t: dict) -> str:
    """A target's verdict as the page says it: met / not met, or why it cannot be told from this run."""
    if t["status"] == "cannot tell":
        return f"**cannot tell from this run**: {md_text(t['why'])}"
    return f"**{t['status']}**"


def summary_md(r: dict) -> str:
    lines = []
    t = r["targets"]
    if "student" in t:
        s = t["student"]
        lines.append(f"**Student**: keeps **{100 * s['accuracy_kept']:.1f}%** of the baseline's accuracy at "
                     f"**{s['latency_ratio']:.2f}x** its latency (target: >= 95% at < 0.5x: {_verdict(s)}).")
    if "onnx_int8" in t:
        o = t["onnx_int8"]
        c = o.get("accuracy_change") or {}
        noise = (f" ({abs(c['sentences'])} of {c['of']} sentences: within noise)" if c.get("within_noise")
                 and c.get("sentences") else "")
        lines.append(f"**ONNX Runtime int8**: **{o['speedup']:.2f}x** faster than the baseline, accuracy "
                     f"{'-' if o['accuracy_loss'] >= 0 else '+'}{abs(100 * o['accuracy_loss']):.1f} points{noise} "
                     f"(target >= 3x: {_verdict(o)}).")
    if r.get("chosen"):
        c = r["chosen"]
        lines.append(f"Distillation settings chosen on validation from {len(r['search'])} trial(s): "
                     f"T = {c['temperature']:g}, alpha = {c['alpha']:g} (validation accuracy {100 * c['val_accuracy']:.1f}%).")
    lines += [md_text(n) for n in r["notices"]]
    timing = ", ".join(f"{k} {v:.0f} s" for k, v in r["timings"].items())
    lines.append(f"*{r['source'].capitalize()} (run `{r['run_id']}`): model time by part: {timing}; {r['threads']} torch thread(s); "
                 f"latency from {r['rows'][0]['latency_runs']} interleaved calls per variant on one query. "
                 "A busy machine slows all variants alike: compare ratios.*")
    return "\n\n".join(lines)


def badge_md(r: dict) -> str:
    m = r.get("model") or {}
    return (f"Baseline: {md_text(m.get('classifier', 'MiniLM fine-tuned on emotion'))} "
            f"(validation accuracy {m.get('validation_accuracy', '-')}; {md_text(m.get('recipe', ''))})")


def _next(through: str) -> str:
    """The step after `through`; after "all" (the whole run, as the page opens) the walk starts again at the
    first step."""
    order = list(compress.THROUGH)
    i = 0 if through == "all" else order.index(through) if through in order else -1
    return order[min(i + 1, len(order) - 2)]  # never past the last step ("all" is its own button)


def _outputs(r: dict) -> tuple:
    return (r, badge_md(r), summary_md(r), table_rows(r),
            plots.scatter(r["rows"], (r.get("claims") or {}).get("fastest")), plots.pruning(r["pruning"]), r["run_id"])


def _run(run, temperature, alpha, layers, sparsity, through, epochs, progress) -> tuple:
    return _outputs(compress.compress(run, temperature, alpha, layers, sparsity, through, epochs, progress=progress))


def run_compress(run, temperature, alpha, layers, sparsity, through, epochs=compress.LIVE_EPOCHS,
                 progress=gr.Progress()):
    """/compress: the chapter 8 benchmark, default (built at set-up) or your settings (live)."""
    return _run(run, temperature, alpha, layers, sparsity, through, epochs, progress)


def next_step(run, temperature, alpha, layers, sparsity, through, epochs, progress=gr.Progress()):
    """The step after the chosen one (the dropdown follows), run like /compress."""
    step = _next(through)
    return (*_run(run, temperature, alpha, layers, sparsity, step, epochs, progress), step)


def predict(text, run_id):
    """/compress_predict: every variant of the run on your sentence; where they disagree."""
    r = compress.compress_predict(text, run_id)
    rows = [[v["variant"], v["label"], f"{100 * max(v['probabilities'].values()):.1f}%", f"{v['ms']:.1f}"]
            for v in r["variants"]]
    if r["disagree"]:
        names = ", ".join(v["variant"] for v in r["variants"] if v["key"] in r["disagree"])
        note = f"**Disagree with the baseline ({md_text(r['baseline_label'])})**: {md_text(names)}."
    else:
        note = f"All {len(rows)} variants agree: **{md_text(r['baseline_label'])}**."
    return r, rows, note


def download(variant, run_id):
    """/compress_download: one variant's files as a zip."""
    r = compress.compress_download(variant, run_id, root=download_root())
    return served(r["path"]), f"`{md_text(r['variant'])}.zip`: {r['megabytes']} MB ({md_text(', '.join(r['files']))})."


def first_view() -> tuple[dict | None, tuple]:
    """What the section shows on first open: the default run whole (its settings in the controls), formatted
    as a run's outputs; (None, ()) when the default run is not built on this server yet (a click runs it)."""
    try:
        r = compress.default_run("all")
    except InputError:  # not built yet
        return None, ()
    except Exception as exc:  # a damaged cache fails this section's first view, never the app's start
        logging.getLogger(__name__).warning("chapter 8 default run not shown on open: %s: %s",
                                            type(exc).__name__, exc)
        return None, ()
    return r["controls"], _outputs(r)


def _controls(shown: dict | None):
    c = shown or {"temperature": compress.DEFAULT_TEMPERATURE, "alpha": compress.DEFAULT_ALPHA,
                  "layers": compress.DEFAULT_LAYERS, "sparsity": compress.DEFAULT_SPARSITY,
                  "epochs": compress.LIVE_EPOCHS, "sparsities": []}
    pruned = ", ".join(f"{100 * x:.0f}%" for x in c["sparsities"])
    with gr.Row():
        run = Radio(list(compress.RUNS), value="default", label="run (default: built at set-up; custom: live)",
                    elem_id="compress-run")
        through = Dropdown(list(compress.THROUGH), value="all", label="run through step",
                           elem_id="compress-through")
    with gr.Row():
        temperature = Slider(0.5, 20, value=c["temperature"], step=0.5, label="temperature T",
                             elem_id="compress-temperature")
        alpha = Slider(0, 1, value=c["alpha"], step=0.05, label="alpha (weight of the hard labels)",
                       elem_id="compress-alpha")
        layers = Slider(1, 5, value=c["layers"], step=1, label="student layers (of 6)", elem_id="compress-layers")
        sparsity = Slider(0.05, 0.95, value=c["sparsity"], step=0.05, elem_id="compress-sparsity",
                          label="pruning sparsity" + (f" (the default run pruned at {pruned})" if pruned else ""))
        epochs = Slider(1, 6, value=c["epochs"], step=1, label="distillation epochs", elem_id="compress-epochs")
    return [run, temperature, alpha, layers, sparsity, through, epochs]


def build() -> None:
    shown, first = first_view()
    first = dict(zip(("json", "badge", "summary", "table", "scatter", "pruning", "run_id"), first))
    with gr.Column(elem_id="compress-panel"):
        gr.Markdown(INTRO)
        inputs = _controls(shown)
        with gr.Row():
            step_btn = gr.Button("Next step", elem_id="compress-next")
            run_btn = gr.Button("Run through the chosen step", variant="primary", elem_id="compress-run-btn")
            stop_btn = gr.Button("Stop", variant="stop", elem_id="compress-stop")
        box = error_box("compress-error")
        link_bar = links.bar("efficiency-compress")  # minutes of work: a link restores the settings, never runs
        badge = gr.Markdown(first.get("badge"), elem_id="compress-badge")
        summary = gr.Markdown(first.get("summary"), elem_id="compress-summary")
        table = gr.Dataframe(first.get("table"), headers=TABLE_HEADERS, label="Every variant, measured in one run",
                             interactive=False,
                             wrap=True, column_widths=TABLE_WIDTHS, elem_id="compress-table")
        with gr.Row():
            scatter = gr.Plot(first.get("scatter"), label="Accuracy against latency", elem_id="compress-scatter")
            pruning = gr.Plot(first.get("pruning"), label="Pruning", elem_id="compress-pruning")
        run_id = Textbox(value="default", label="run id (the sentence box and downloads use this run)",
                         interactive=False, elem_id="compress-run-id")
        out_json = raw_json("Raw result (JSON: what /compress returns)", value=first.get("json"))
        code = code_view.view("compress")  # "The same in Python", under the raw result
        outputs = [out_json, badge, summary, table, scatter, pruning, run_id]
        named = dict(zip(("run", "temperature", "alpha", "layers", "sparsity", "through", "epochs"), inputs))
        # Both runs write the section's link and are kept; a link restores the settings, never runs.
        link = Link("efficiency-compress", link_bar, parent="efficiency",
                    params={k: named[k] for k in ("run", "through", "temperature", "alpha", "layers", "sparsity",
                                                  "epochs")},
                    results=[out_json, badge, summary, table, scatter, pruning])
        kept = Runs(runs.panel("efficiency-compress"), [badge, summary, table, scatter])
        progress = {"show_progress_on": [summary]}
        ev, = declare(Endpoint("compress", run_compress, named, outputs, trigger=run_btn, lane=LONG_LANE,
                               options=progress, errors=box, link=link, runs=kept, result=out_json, code=code, contract=CONTRACTS["compress"]))
        # Next step also moves the step dropdown; a failure blanks the result, not the dropdown.
        ev2, = declare(Endpoint(None, next_step, named, outputs + [named["through"]], trigger=step_btn,
                                lane=LONG_LANE, options=progress, errors=box, cleared=outputs, link=link, runs=kept,
                                result=out_json, code=Code(code, name="compress"), contract=CONTRACTS["compress"]))
        # `through`: the step it ran
        stop_btn.click(None, None, None, cancels=[ev, ev2], queue=False, api_visibility="private")
        _use(run_id)


def _use(run_id) -> None:
    gr.Markdown("#### Every variant on your sentence")
    with gr.Row():
        text = Textbox(label="sentence", value="I can't believe they cancelled the trip, I'm furious.",
                       elem_id="compress-text")
        go_btn = gr.Button("Run every variant", elem_id="compress-predict-btn")
    box = error_box("compress-predict-error")
    note = gr.Markdown(elem_id="compress-predict-note")
    table = gr.Dataframe(headers=PREDICT_HEADERS, interactive=False, wrap=True, elem_id="compress-predict-table")
    pred_json = raw_json("Raw result (JSON: what /compress_predict returns)")
    declare(Endpoint("compress_predict", predict, {"text": text, "run_id": run_id}, [pred_json, table, note],
                     trigger=go_btn, lane=SHORT_LANE, errors=box, contract=CONTRACTS["compress_predict"]))
    with gr.Row():
        variant = Textbox(value="student_onnx_int8", label="variant to download (key from the raw JSON)",
                          elem_id="compress-variant")
        dl_btn = gr.Button("Download the model (zip)", elem_id="compress-download")
    dl_file = gr.File(label="model files", interactive=False, elem_id="compress-download-file")
    dl_note = gr.Markdown(elem_id="compress-download-note")
    declare(Endpoint("compress_download", download, {"variant": variant, "run_id": run_id}, [dl_file, dl_note],
                     trigger=dl_btn, lane=SHORT_LANE, errors=box, contract=CONTRACTS["compress_download"]))
