"""What the From scratch tab's two models trained in the visitor's session share (the tiny GPT, gpt.py; the tiny
encoder-decoder, seq2seq.py), written once: the size and optimiser settings, the plan line before training and the
run's length after it, the Train / Stop row, the download row and its endpoint (/download_gpt, /download_seq2seq),
Stop, and the session dropped when the page closes. Each section keeps its own words, elem_ids and api_names."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Callable

import gradio as gr

from backend.scratch.contracts import CONTRACTS
from backend.runtime.errors import LabError
from components.shell import Dropdown, Number, Slider, error_box, gradio_patches, md_text
from components.shell.badge import model_time
from components.shell.endpoint import After, Endpoint, declare
from components.shell.session import session_of, stop_said
from components.shell.session_memory import download_root, served
from components.scratch.plots import zip_line

STOPPING = "*Stopping after the current step; the model trained so far is kept...*"


@dataclass(frozen=True)
class SessionModel:
    """One model trained in the visitor's session: `what` a refusal calls it (session_of), and the backend's `stop`,
    `export` (its zip, written into a folder) and `drop` for a session."""
    what: str
    stop_fn: Callable
    export_fn: Callable
    drop_fn: Callable

    def session(self, request) -> str:
        return session_of(request, self.what)

    def stop(self, request: gr.Request):
        """Set the session's stop flag: training ends after its current step, keeping the model so far."""
        return stop_said(self.stop_fn, getattr(request, "session_hash", None), STOPPING)

    def zipped(self, request) -> tuple:
        """The session's model as a zip served from Gradio's cache, and the line that says what it holds."""
        r = self.export_fn(self.session(request), root=download_root())
        return served(r["path"]), zip_line(r)

    def drop_session(self, request: gr.Request):
        self.drop_fn(getattr(request, "session_hash", None) if request is not None else None)


def stream(events, on: Callable[[dict], str], figure: Callable, samples: Callable, done: Callable, outputs: int,
           first: str = "*Step 0*"):
    """A training run's events as the page shows them (`outputs` values a yield): the plan's line (what it trains
    `on`), then after each step or check the status, the loss `figure(losses, evals, plan)` and, at a check, the
    `samples(evals)`, the other outputs left as they are; at the end `done(result, plan)`."""
    losses, evals, plan = [], [], {}
    skip = gr.update()
    rest = (skip,) * (outputs - 3)
    for ev in events:
        kind = ev["event"]
        if kind == "plan":
            plan = ev
            yield (f"*Training: {ev['parameters']:,} parameters on {on(ev)}; press Stop to keep the model trained so "
                   "far.*", skip, skip) + rest
            continue
        if kind == "step":
            losses += ev["losses"]
        elif kind == "eval":
            evals.append(ev)
        elif kind == "done":
            yield done(ev["result"], plan)
            return
        status = f"*Step {len(losses):,}/{plan.get('steps'):,}, loss {losses[-1]:.3f}*" if losses else first
        yield (status, figure(losses, evals, plan), samples(evals) if kind == "eval" else skip) + rest


def plan_line(p: dict, model: str, checks: str) -> str:
    """The plan before training: steps of a `model` of this size, the validation `checks`, seconds, the budget."""
    fits = "fits" if p["fits"] else f"**does not fit**: at most {p['max_steps']:,} steps at this size"
    return (f"Plan: **{p['steps']:,} steps** of a **{p['parameters']:,}-parameter** {model} "
            f"(~{p['seconds_per_step']:.2f} s a step) plus {p['evals']} validation checks {checks} ≈ "
            f"**{p['seconds']:.0f} s** ({md_text(p['basis'])}); this server's budget per request is "
            f"{p['budget_s']:g} s: it {fits}. {p['device_note']}")


def said_plan(plan: Callable[[], dict], line: Callable[[dict], str]) -> str:
    """Before training: the plan from the settings alone (no model runs); an error is shown, not raised."""
    try:
        return line(plan())
    except LabError as exc:
        return f"**Cannot train with these settings:** {html.escape(str(exc))}"


def trained_line(r: dict, rate: str) -> str:
    """After the run: how many steps (and why fewer), how long, at what `rate`, and the model's size."""
    how = f"all {r['steps_run']:,} steps" if not r["stopped"] else \
        f"**{r['steps_run']:,} of {r['steps']:,} steps** ({md_text(r['stopped'])}; the model so far is kept)"
    return (f"Trained {how}: **{model_time(r['seconds'])}** ({r['train_seconds']:.1f} s of steps, {rate}): "
            f"{r['parameters']:,} parameters")


def plan_said(r: dict) -> str:
    return f"(plan said {r['plan']['seconds']:.0f} s, {md_text(r['plan']['basis'])})"


def after_stop(r: dict) -> str:
    """What Stop skipped (no validation or test pass runs after it), said rather than hidden."""
    step = (r.get("final") or {}).get("val_step")
    if r.get("stopped") != "stopped" or step is None or step == r["steps_run"]:
        return ""
    return f" The validation figures are from step {step:,}: no validation pass runs after Stop."


def size_controls(key: str, d: dict, max_layers: int, layers_label: str, widths: list) -> list:
    """Training steps, layers, width and heads (elem_ids scratch-<key>-...), placed where this is called."""
    return [Slider(10, 2000, value=d["steps"], step=10, label="Training steps", elem_id=f"scratch-{key}-steps"),
            Slider(1, max_layers, value=d["layers"], step=1, label=layers_label, elem_id=f"scratch-{key}-layers"),
            Dropdown(widths, value=d["width"], label="Width (embedding size)", elem_id=f"scratch-{key}-width"),
            Dropdown([1, 2, 4, 8], value=d["heads"], label="Heads", elem_id=f"scratch-{key}-heads")]


def optimiser_controls(key: str, d: dict) -> list:
    return [Number(d["learning_rate"], label="Learning rate (AdamW)", elem_id=f"scratch-{key}-lr"),
            Number(d["seed"], label="Seed", precision=0, elem_id=f"scratch-{key}-seed")]


def train_row(key: str, label: str) -> tuple:
    """Train and Stop, then the error box and the status line: (train, stop, box, status)."""
    with gr.Row():
        go = gr.Button(label, variant="primary", elem_id=f"scratch-{key}-go")
        stop = gr.Button("Stop", variant="stop", elem_id=f"scratch-{key}-stop")
    return go, stop, error_box(elem_id=f"scratch-{key}-error"), gr.Markdown(elem_id=f"scratch-{key}-status")


def download_row(key: str, label: str) -> tuple:
    """The download button (enabled once a model is trained), its file and its line: (button, file, line)."""
    with gr.Row():
        button = gr.Button("Download (zip: save_pretrained folder + tokenizer + model card)", interactive=False,
                           elem_id=f"scratch-{key}-download")
        file = gr.File(label=label, visible=False, interactive=False, elem_id=f"scratch-{key}-file")
    return button, file, gr.Markdown(elem_id=f"scratch-{key}-download-status")


def wire(model: SessionModel, name: str, download: Callable, stop_btn, status, row: tuple, box) -> None:
    """Stop (the page's own), /`name` (`download`: the zip, shown once written) and the session dropped when the
    page closes."""
    stop_btn.click(model.stop, None, [status], api_visibility="private", queue=False)
    button, file, line = row
    declare(Endpoint(name, download, {}, [file, line], trigger=button, errors=box,
                     after=[After("success", lambda: gr.update(visible=True), None, [file])], contract=CONTRACTS[name]))
    root = gradio_patches.page_being_built()
    if root is not None:
        root.unload(model.drop_session)
