"""The Multilingual tab's live run: the learner picks the training languages and the steps, the
default run's recipe trains on them with progress and Stop, and its table replaces the default run's on
screen under a badge that says whose run it is; "Show the transfer table" brings the default run back.

The Train tab's NER run is the pattern (components/train/ner.py): a streamed handler with gr.Progress, the
long lane (one long job per visitor, the client's share, admission at the queue's door), a private Stop
that sets the session's flag (`stop_said`) so the run ends after its current step and what it trained is
still scored and shown."""

from __future__ import annotations

from typing import Callable

import gradio as gr

from backend import multilingual
from components import shell as common
from components.shell import SHORT_LANE, CheckboxGroup, Slider, md_text
from components.shell.session import session_of, stop_said

LANE = getattr(common, "LONG_LANE", SHORT_LANE)
RUN = "yours"
LANGUAGE_CHOICES = [("German", "de"), ("French", "fr"), ("Italian", "it"), ("English", "en")]
STOPPING = "*Stopping before the next step; what it trained so far is scored on the four test sets...*"
EXPLAINED = (
    "#### Your own run, live\n"
    "Pick the languages to fine-tune on and the number of **training steps** (one step: a batch of 16 training "
    "sentences read, the loss's gradient taken, the learning weights moved once; under a second on a 2-core CPU). The "
    "default run's recipe is used: the embeddings and the lower encoder layers stay **frozen** (not updated, as "
    "the pretrained model left them), only the top layers and the new token head learn. Then every language's test "
    f"set is scored: a language you left out measures zero-shot transfer. At most {multilingual.MAX_STEPS} steps "
    f"(about a minute); the default run used {multilingual.DEFAULT_STEPS['de']} (German) and "
    f"{multilingual.DEFAULT_STEPS['all']} (all four). Stop ends it after the current step "
    "and still scores what it learned.")


def badge_md(r: dict) -> str:
    """The heading over a learner's run: whose run, its languages and steps, stopped or not, what was frozen,
    and the way back to the default run."""
    s = r["learner"]
    names = ", ".join(r["languages"][l] for l in s["languages"])
    left_out = [r["languages"][l] for l in r["languages"] if l not in s["languages"]]
    done = (f"**stopped by {md_text(s['stopped_by'] or 'a stop')} after {s['steps_done']} of {s['steps']} steps**"
            if s["stopped"] else f"{s['steps_done']} of {s['steps']} steps")
    said = [f"### Your run: trained on {names} · {done} · {s['seconds']:.0f} s",
            f"Frozen: {md_text(s['frozen'])}; trained: {md_text(s['trained'])} ({s['step_s']:.2f} s a step). "
            + (f"Zero-shot transfer to {', '.join(left_out)}. " if left_out else "")
            + "The table, plot and errors below are your run's; the default run (German only, all four languages) "
            "is still there: **Show the transfer table** brings it back."]
    return "\n\n".join(said)


def summary_md(r: dict) -> str:
    """Your run's numbers in words: entity F1 per test language, after how many steps."""
    row, s = r["table"][0], r["learner"]
    scores = ", ".join(f"{name} {row[l]:.3f}" for l, name in r["languages"].items())
    return (f"**Entity F1 of your run** on each test set after {s['steps_done']} training steps: {scores}. The "
            f"default run's German model took {multilingual.DEFAULT_STEPS['de']} steps "
            "(an F1 of 0 means no entity was tagged right yet: the new head starts by tagging every word O).")


def handler(shown: Callable[[dict], tuple]) -> Callable:
    """/multilingual_ner_train's handler: your own run (languages, steps), streamed into the badge; at the end
    the badge and `shown(result)` (the tab's raw JSON, summary, table, plot, errors, examples: ui.py's own)."""

    def run_live(languages, steps, request: gr.Request, progress=gr.Progress()):
        sid = session_of(request, "your own multilingual run")
        rest = (gr.update(),) * 6
        for ev in multilingual.train_iter(sid, languages, steps):
            kind = ev["event"]
            if kind == "plan":
                progress(0.0, f"step 0 of {ev['steps']}")
                yield (f"*Your run: {ev['steps']} training steps on {', '.join(ev['languages'])} (loading the "
                       "encoder)... press Stop to end it early.*",) + rest
            elif kind == "step":
                progress(ev["step"] / ev["total_steps"], f"step {ev['step']} of {ev['total_steps']}")
                yield (f"*Training: step {ev['step']} of {ev['total_steps']}, loss {ev['loss']:.3f} · press Stop to "
                       "end it early (what it trained is still scored)*",) + rest
            elif kind == "scoring":
                yield ("*Scoring entity F1 on the German, French, Italian and English test sets...*",) + rest
            elif kind == "done":
                yield (badge_md(ev["result"]),) + shown(ev["result"])

    return run_live


def stop_live(request: gr.Request):
    return stop_said(multilingual.stop, getattr(request, "session_hash", None), STOPPING)


def build() -> tuple:
    """The live run's widgets -> (languages, steps, go, stop, badge)."""
    gr.Markdown(EXPLAINED)
    with gr.Row():
        languages = CheckboxGroup(LANGUAGE_CHOICES, value=["de"], label="train on (a language left out is "
                                     "zero-shot transfer)", elem_id="ml-live-languages", scale=2)
        steps = Slider(1, multilingual.MAX_STEPS, value=20, step=1, label="training steps (batches of 16)",
                       elem_id="ml-live-steps", scale=2)
        with gr.Column(scale=1):
            go = gr.Button("Train your own run", variant="primary", elem_id="ml-live-go")
            stop = gr.Button("Stop", variant="stop", elem_id="ml-live-stop")
    badge = gr.Markdown(elem_id="ml-live-badge")
    return languages, steps, go, stop, badge
