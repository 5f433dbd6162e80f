"""The Decoding tab: type a prompt, pick a strategy, and see why the text came out as it did.

UI wiring only; the work is in `backend.decoding`. API endpoints (plain JSON in and out):
`/decode` (prompt + one settings dict) and `/compare_decoding` (prompt + 2-4 settings dicts).
The Run button streams text token by token (greedy and sampling); its event is not an API.
"""

from __future__ import annotations

import json

import gradio as gr

from backend.decoding.contracts import CONTRACTS, PAGE_CONTRACTS
from backend import decoding
from components.decoding import by_hand as decoding_by_hand
from components.shell import code_view, lifecycle, links, runs
from components.shell import (
    DECODE_LANE, LONG_LANE, SHORT_LANE, Checkbox, CheckboxGroup, Radio, Slider, Textbox, server_lane, error_box,
    raw_json,
)
from components.shell.endpoint import Code, Endpoint, Link, Runs, declare
from components.decoding.plots import empty_figure
from components.decoding.handlers import (
    COMPARE_CHOICES, COMPARE_PICKED, PRESET_PROMPT, _compare_api, _decode_api_plan, _decode_plan, apply_preset,
    blank_results, compare_ui, decode_api, knob_updates, picked_strategies, run, running_line, seed_from_link,
    show_step, stopped_line,
)
from components.decoding.tables import (COMPARE_HEADERS, COMPARE_WIDTHS, OUTPUT_HEADERS, OUTPUT_WIDTHS, SAMPLING_HEADERS,
                                        STEP_HEADERS, step_widths)

INTRO = """
### Decoding strategies (the book's chapter 5, made visible)
Pick a strategy and watch the model choose each token. **Greedy** takes the most likely token
every step; **beam search** keeps the *n* best partial sequences; **sampling** draws from the
distribution after *temperature* and the *top-k* / *top-p* cut. The step table shows the
candidates at each step; the plots show the next-token distribution at several temperatures,
where top-p cuts it, and, for beam search, the tree of kept and pruned hypotheses.
"""

DEFAULT_TEMPS = "0.5, 1.0, 2.0"


# ----------------------------------------------------------------------------- layout


def _prompt_row():
    """The prompt, presets, chat template and model box; the strategy, length and seed."""
    with gr.Row():
        with gr.Column(scale=3):
            prompt = Textbox(label="Prompt", lines=4, value="Transformers are the", elem_id="decoding-prompt")
            with gr.Row():
                preset = gr.Dropdown(choices=[(PRESET_PROMPT, "")] + list(decoding.PRESETS), value="",
                                     label="Book examples (presets)",
                                     info=f"{len(decoding.PRESETS)} of the book's prompts and settings: pick one",
                                     elem_id="decoding-preset")
                chat = Checkbox(label="Use the model's chat template (instruct models)", value=False)
            model_box = Textbox(label="Model (optional: a Hub id or folder; empty = the decoder role's model)",
                                value="", max_lines=1, elem_id="decoding-model")
            links.handoff("Why this next token?", prompt, "why", "text", task="next_token")
        with gr.Column(scale=2):
            strategy = Radio(choices=list(decoding.STRATEGIES), value="greedy", label="Strategy",
                                elem_id="decoding-strategy")
            max_new = Slider(1, decoding.MAX_NEW_TOKENS_CAP, value=32, step=1, label="max_new_tokens",
                             elem_id="decoding-max-new")
            seed = Textbox(label="seed (sampling; empty = random, reported)", value="", max_lines=1,
                           elem_id="decoding-seed", interactive=False)
    return prompt, preset, chat, model_box, strategy, max_new, seed


def _knob_rows():
    """The knobs, grouped by the strategy that reads them (the others start greyed out)."""
    # The knobs the default strategy (greedy) does not read start greyed out; `knob_updates` on a change.
    with gr.Row():
        with gr.Column():
            sampling_head = gr.Markdown("**Sampling** · not used by greedy", elem_id="decoding-sampling-head")
            temperature = Slider(0, 3, value=1.0, step=0.05, label="temperature", elem_id="decoding-temperature",
                                 interactive=False)
            top_k = Slider(0, 200, value=0, step=1, label="top_k (0 = off)", elem_id="decoding-top-k",
                           interactive=False)
            top_p = Slider(0, 1, value=1.0, step=0.01, label="top_p (1 = off)", elem_id="decoding-top-p",
                           interactive=False)
        with gr.Column():
            beam_head = gr.Markdown("**Beam search** · not used by greedy", elem_id="decoding-beam-head")
            num_beams = Slider(2, decoding.MAX_BEAMS, value=4, step=1, label="num_beams", elem_id="decoding-beams",
                               interactive=False)
            length_penalty = Slider(-2, 3, value=1.0, step=0.1, label="length_penalty",
                                    elem_id="decoding-length-penalty", interactive=False)
            early_stopping = Checkbox(label="early_stopping", value=False, elem_id="decoding-early-stopping",
                                      interactive=False)
        with gr.Column():
            gr.Markdown("**All strategies**")
            no_repeat = Slider(0, 6, value=0, step=1, label="no_repeat_ngram_size (0 = off)")
            rep_pen = Slider(0.5, 2.0, value=1.0, step=0.05, label="repetition_penalty (1 = off)")
            n_return = Slider(1, decoding.MAX_BEAMS, value=1, step=1, elem_id="decoding-n-return", interactive=False,
                              label="num_return_sequences (beam or sample; greedy returns one)")
            top_n = Slider(1, decoding.MAX_TOP_N, value=5, step=1, label="candidates per step in the table")
            precision = Radio(choices=list(decoding.PRECISIONS), value="fp32", elem_id="decoding-precision",
                              label="precision (int8: the quantized copy of the Efficiency tab; the table "
                                    "then shows both models' probabilities)")
    return [sampling_head, temperature, top_k, top_p, beam_head, num_beams, length_penalty, early_stopping, no_repeat,
            rep_pen, n_return, top_n, precision]


def _result_area():
    """Where one run shows: text, stats, badge, tables, the inspector's plots, the beam tree, the JSON."""
    box = error_box("decoding-error")
    link_bar = links.bar("decoding")  # a generation is not cheap: a link restores, the visitor runs
    text = Textbox(label="Generated text", lines=6, interactive=False, elem_id="decoding-text")
    stats = gr.Markdown(elem_id="decoding-stats")
    badge = gr.Markdown(elem_id="decoding-badge")
    outputs_df = gr.Dataframe(headers=OUTPUT_HEADERS, label="All returned sequences", visible=False,
                              interactive=False, wrap=True, column_widths=OUTPUT_WIDTHS, elem_id="decoding-outputs")
    first_headers = [h for h in STEP_HEADERS if h not in SAMPLING_HEADERS]
    steps_df = gr.Dataframe(headers=first_headers, label="Step by step: p = the model's probability of the chosen "
                            "token (with sampling also after temperature, after the top-k/top-p cut, and how many "
                            "tokens were left)", interactive=False, wrap=True, column_widths=step_widths(first_headers),
                            max_height=420, elem_id="decoding-steps")
    with gr.Row():
        step = Slider(0, 1, value=0, step=1, label="inspect the distribution before generated token #",
                         interactive=False, elem_id="decoding-step")
        temps = Textbox(label="temperatures to overlay", value=DEFAULT_TEMPS, max_lines=1)
    with gr.Row():
        temp_plot = gr.Plot(label="Next-token distribution at several temperatures", elem_id="decoding-temp-plot")
        cum_plot = gr.Plot(label="Top-p cut on the cumulative distribution", elem_id="decoding-cum-plot")
    tree_plot = gr.Plot(value=empty_figure("Run beam search to see the beam tree."), label="Beam tree",
                        elem_id="decoding-tree-plot")
    result_json = raw_json("Raw result (JSON: what /decode returns)")
    state = gr.State(None)

    return box, link_bar, text, stats, badge, outputs_df, steps_df, step, temps, temp_plot, cum_plot, tree_plot, result_json, state


def _compare_area():
    """The comparison of 2-4 strategies, in its own accordion."""
    with gr.Accordion("Compare 2-4 strategies on this prompt", open=False, elem_id="decoding-compare"):
        picker = CheckboxGroup(list(COMPARE_CHOICES), value=list(COMPARE_PICKED), elem_id="decoding-compare-pick",
                                  label="Strategies to compare (pick 2-4; they fill the JSON below, which you may edit)")
        strategies = gr.Code(value=json.dumps(decoding.COMPARE_DEFAULT, indent=1), language="json",
                             label="strategies (a JSON list of settings, as /decode takes)",
                             elem_id="decoding-strategies")
        cmp_btn = gr.Button("Compare", elem_id="decoding-compare-run")
        cmp_box = error_box("decoding-compare-error")
        cmp_df = gr.Dataframe(headers=COMPARE_HEADERS, interactive=False, wrap=True, column_widths=COMPARE_WIDTHS,
                              elem_id="decoding-compare-table")
        cmp_plot = gr.Plot(label="Strategies side by side", elem_id="decoding-compare-plot")
        cmp_badge = gr.Markdown()
        cmp_json = raw_json("Raw result (JSON: what /compare_decoding returns)")

    return picker, strategies, cmp_btn, cmp_box, cmp_df, cmp_plot, cmp_badge, cmp_json

def build() -> None:
    gr.Markdown(INTRO)
    prompt, preset, chat, model_box, strategy, max_new, seed = _prompt_row()
    (sampling_head, temperature, top_k, top_p, beam_head, num_beams, length_penalty, early_stopping, no_repeat,
     rep_pen, n_return, top_n, precision) = _knob_rows()
    with gr.Row():
        run_btn = gr.Button("Generate", variant="primary", elem_id="decoding-run")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="decoding-stop")

    (box, link_bar, text, stats, badge, outputs_df, steps_df, step, temps, temp_plot, cum_plot, tree_plot,
     result_json, state) = _result_area()
    code = code_view.view("decoding")  # "The same in Python", under the run's result
    kept = runs.panel("decoding")  # this session's runs, two side by side
    picker, strategies, cmp_btn, cmp_box, cmp_df, cmp_plot, cmp_badge, cmp_json = _compare_area()

    decoding_by_hand.build(prompt, chat, model_box)  # its own accordion and /decode_by_hand

    knobs = [strategy, max_new, temperature, top_k, top_p, num_beams, length_penalty, no_repeat, early_stopping,
             n_return, rep_pen, seed, chat, top_n]
    preset.change(apply_preset, [preset], [prompt, *knobs], api_visibility="private", **lifecycle.NO_PROGRESS)
    results = [text, stats, badge, steps_df, outputs_df, temp_plot, cum_plot, tree_plot, result_json]
    strategy.change(knob_updates, [strategy], [sampling_head, temperature, top_k, top_p, seed, beam_head, num_beams,
                                               length_penalty, early_stopping, n_return],
                    **lifecycle.PAGE_ONLY)
    # Generate first blanks the last run's result (at once, even while this run waits for the model),
    # then streams; Stop cancels the stream first, then rewrites its "▶" line as this run's partial line.
    # A link carries the seed the run used (`seed_link`, written by the run), a drawn one included;
    # opened, it puts that seed in the seed box.
    seed_link = gr.Textbox(value="", visible="hidden", elem_id="decoding-seed-used")
    seed_link.change(seed_from_link, [seed_link, state], [seed], **lifecycle.PAGE_ONLY)
    blanked = run_btn.click(lambda: blank_results(running_line()), None, [*results, state, step],
                            **lifecycle.PAGE_ONLY)
    # The run (not an API: /decode is its twin for scripts; its code view calls /decode with the prompt and the
    # run's own settings, blanked as Generate is pressed); without a server the long lane, with one the decode
    # lane. Its link carries the seed the run used (the hidden holder), not the seed box.
    run_event, = declare(Endpoint(
        None, run, {"prompt": prompt, "strategy": strategy, "max_new_tokens": max_new, "temperature": temperature,
                    "top_k": top_k, "top_p": top_p, "num_beams": num_beams, "length_penalty": length_penalty,
                    "no_repeat_ngram_size": no_repeat, "early_stopping": early_stopping,
                    "num_return_sequences": n_return, "repetition_penalty": rep_pen, "seed": seed,
                    "chat_template": chat, "top_n": top_n, "precision": precision, "temps_text": temps,
                    "model": model_box},
        [*results, state, step, seed_link], trigger=blanked.then, lane=server_lane(), errors=box, cleared=results,
        planner=_decode_plan, result=result_json,
        code=Code(code, name="decode", inputs={"prompt": prompt}, trigger=run_btn),
        link=Link("decoding", link_bar, {
            "prompt": prompt, "strategy": strategy, "max_new": max_new, "temperature": temperature, "top_k": top_k,
            "top_p": top_p, "num_beams": num_beams, "length_penalty": length_penalty, "no_repeat": no_repeat,
            "early_stopping": early_stopping, "n_return": n_return, "rep_pen": rep_pen, "seed": seed_link,
            "chat": chat, "top_n": top_n, "precision": precision},
            results=[*results, state]),  # a reopened link: not the run shown
        runs=Runs(kept, [text, stats, badge]), contract=PAGE_CONTRACTS["run"]))
    stop_btn.click(None, None, None, cancels=[run_event], api_visibility="private")
    stop_btn.click(stopped_line, [stats], [stats], api_visibility="private", queue=False)
    # the number box fires `input` as it is typed in (its `release` only on blur); the slider on a drag
    shown = {"state": state, "step": step, "temps_text": temps}
    declare(Endpoint(None, show_step, shown, [temp_plot, cum_plot], trigger=step.input, lane=SHORT_LANE,
                     options={"trigger_mode": "always_last"}))
    declare(Endpoint(None, show_step, shown, [temp_plot, cum_plot], trigger=temps.submit, lane=SHORT_LANE))
    # A second tick while the first is on its way runs after it (Gradio's default for `input` dropped it: the
    # JSON then missed the strategy ticked last).
    picker.input(picked_strategies, [picker], [strategies], api_visibility="private", queue=False,
                 trigger_mode="always_last")
    declare(Endpoint(None, compare_ui, {"prompt": prompt, "strategies_text": strategies, "model": model_box},
                     [cmp_df, cmp_plot, cmp_json, cmp_badge], trigger=cmp_btn, lane=LONG_LANE, errors=cmp_box,
                     contract=PAGE_CONTRACTS["compare"]))

    # gr.api takes only the queue/concurrency part of the shared event settings
    def lane(q: dict) -> dict:
        return {k: v for k, v in q.items() if k in ("concurrency_limit", "concurrency_id", "queue")}

    links.model_box("decoding", model_box)
    declare(Endpoint("decode", decode_api, {}, [], lane=lane(DECODE_LANE), planner=_decode_api_plan,
                     shell_slot=True, contract=CONTRACTS["decode"]))  # long decodes also take the long lane's slot
    declare(Endpoint("compare_decoding", _compare_api, {}, [], lane=lane(LONG_LANE), contract=CONTRACTS["compare_decoding"]))
