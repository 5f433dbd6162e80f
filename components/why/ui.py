"""The Why tab: which words of the input a prediction rests on, by four methods, and whether to
believe them (completeness, a deletion test against random orders, agreement between methods).

One button runs `backend.why.attribute` (/attribute, a public API whose first output
is the JSON result); handlers.py formats it, plots.py draws it. Other tabs open this one with
their prediction loaded through `links.handoff(..., "why", "text", task=...)`.
"""

from __future__ import annotations

from backend.why.contracts import CONTRACTS
import gradio as gr

import backend.why as attribution
from components.shell import code_view, lifecycle, links, runs
from components.shell import LONG_LANE, CheckboxGroup, Radio, Slider, Textbox, error_box, model_box, raw_json
from components.shell.endpoint import After, Endpoint, Link, Runs, declare
from components.why import handlers, plots

KEY = "why"
INTRO = (
    "### Why did the model say that?\nPick a prediction the lab makes on a text and see which tokens it rests "
    "on, by four methods from [Captum](https://captum.ai): **gradient x input**, **integrated gradients** (from "
    "an all-[PAD] baseline), **occlusion** (remove one token, see the output change) and **attention rollout** "
    "(attention weights multiplied through the layers). Raw last-layer attention is shown too, as what it is: "
    "where one layer looked, not why the model decided. Beside the scores, three checks computed on this very "
    "input say whether to believe them."
)
EXAMPLE = "The food was cold and the waiter was rude, but the dessert was lovely."
LIMITS = ("Inputs up to 128 tokens (question and context together for QA), the decoder's prompt too. Each of the "
          "decoder's removals reuses the prompt's cached keys and values up to the removed token, and its output layer "
          "reads only the position it predicts, so a 128-token prompt at the default settings (16 integrated-gradients "
          "steps, 4 random orders) takes about 64 s of CPU on one idle core, about half the 120 s request budget (86-91 s "
          "recomputing each shortened prompt whole); a busy server can still run out of time: then choose fewer methods.")


MODEL_INFO = ("Empty: the profile's model for the prediction chosen. NER: 'multilingual' (or 'multilingual-de', "
              "trained on German only) explains chapter 4's model, the multilingual encoder fine-tuned here, on a "
              "German, French or Italian sentence. Never part of a link.")


def build() -> None:
    with gr.Column(elem_id="why-panel"):
        gr.Markdown(INTRO)
        task = Radio(handlers.TASK_CHOICES, value="sentiment", label="Which prediction", elem_id="why-task")
        text = Textbox(value=EXAMPLE, lines=3, label="Text (for the decoder: the prompt; for QA: the context)",
                       elem_id="why-text")
        question = Textbox(label="QA: the question (the answer span is explained)", value="",
                           placeholder="When was the Eiffel Tower built?", elem_id="why-question")
        with gr.Row():
            labels = Textbox(label="Zero-shot: candidate labels", placeholder="sport, politics, cooking",
                             value="", elem_id="why-labels")
            label = Textbox(label="Explain this label (QA: this span of the context; empty: the predicted one)",
                            value="", elem_id="why-label")
            word = Textbox(label="NER: the word whose tag is explained (empty: the first entity)", value="", elem_id="why-word")
        model = model_box(elem_id="why-model", info=MODEL_INFO)
        with gr.Row():
            target = Textbox(label="Decoder: target token (empty: the most likely)", placeholder="Paris",
                             value="", elem_id="why-target")
            contrast = Textbox(label="Decoder: rather than (contrast token, optional)", placeholder="London",
                               value="", elem_id="why-contrast")
        with gr.Accordion("Methods and settings", open=False):
            methods = CheckboxGroup(list(attribution.METHODS), value=list(attribution.METHODS), label="methods",
                                    elem_id="why-methods")
            with gr.Row():
                steps = Slider(0, attribution.api.MAX_STEPS, value=0, step=1, label="integrated-gradients steps (0: the default, 32; "
                               "16 for the decoder)", elem_id="why-steps")
                orders = Slider(0, 20, value=0, step=1, label="random orders in the deletion test (0: the default, "
                                "6; 4 for the decoder)", elem_id="why-orders")
            gr.Markdown(LIMITS, elem_id="why-limits")
        run = gr.Button("Why?", variant="primary", elem_id="why-run")
        box = error_box("why-error")
        link_bar = links.bar(KEY)
        badge = gr.Markdown(elem_id="why-badge")
        summary = gr.Markdown(elem_id="why-summary")
        strip = gr.HTML(elem_id="why-strip", css_template=plots.STRIP_CSS)
        with gr.Row():
            deletion = gr.Plot(label="Deletion test", elem_id="why-deletion-plot")
            agreement = gr.Plot(label="Agreement between methods", elem_id="why-agreement-plot")
        # hidden until a run fills it: an empty Dataframe would show placeholder "1 2 3" headers
        table = gr.Dataframe(label="Scores per token (signed: + raises the explained quantity)", interactive=False,
                             headers=["token"], wrap=True, max_height=420, visible=False, elem_id="why-table")
        handed = Textbox(value="", visible="hidden", label="handed over", elem_id="why-handed")
        out_json = raw_json("Raw result (JSON: what /attribute returns)")
        code = code_view.view("why")  # "The same in Python", under the raw result
        outputs = [out_json, badge, summary, strip, table, deletion, agreement]
        declare(Endpoint(
            "attribute", handlers.run_attribute,
            {"text": text, "task": task, "labels": labels, "label": label, "target": target, "contrast": contrast,
             "word": word, "methods": methods, "steps": steps, "random_orders": orders, "question": question,
             "model_box": model},
            outputs, trigger=run, lane=LONG_LANE, options={"show_progress_on": [summary]}, errors=box,
            result=out_json, code=code,
            after=[After("failure", lambda: gr.update(visible=False), None, [table])],
            link=Link(KEY, link_bar, params={"text": text, "task": task, "labels": labels, "label": label,
                                             "word": word, "target": target, "contrast": contrast, "steps": steps,
                                             "orders": orders, "question": question, "handed": handed}),
            runs=Runs(runs.panel(KEY), [badge, summary, deletion, agreement]), contract=CONTRACTS["attribute"]))
        # a hand-off that carries more than one input (zero-shot: text and labels) hands over one
        # packed value here; it is unpacked into the inputs (handlers.unpack)
        handed.change(handlers.unpack, handed, [text, labels, word, question, label, handed], **lifecycle.PAGE_ONLY)
