"""The Decoding tab: type a prompt, pick a strategy, and see why the text came out as it did.

UI wiring only; the work is in `backend.decoding`. API endpoints (plain JSON in and out):
`/decode` (prompt + one settings dict) and `/compare_decoding` (prompt + 2-4 settings dicts).
The Run button streams text token by token (greedy and sampling); its event is not an API.
"""

from __future__ import annotations

import contextlib
import json

import gradio as gr
import pandas as pd

from backend import decoding
from backend.errors import InputError, LabError
from backend.validation import as_int
from components.common import (
    DECODE_LANE, LONG_LANE, MODEL_QUEUE, Checkbox, Radio, Slider, Textbox, md_text, model_badge, readable_error,
    user_errors,
)
from components.decoding_plots import (
    beam_tree_figure,
    compare_figure,
    cumulative_figure,
    empty_figure,
    show_token,
    temperature_figure,
)

INTRO = """
### Decoding strategies (the book's chapter 5, made visible)
Pick a strategy and watch the model choose each token. **Greedy** takes the most likely token
every step; **beam search** keeps the *n* best partial sequences; **sampling** draws from the
distribution after *temperature* and the *top-k* / *top-p* cut. The step table shows the
candidates at each step; the plots show the next-token distribution at several temperatures,
where top-p cuts it, and, for beam search, the tree of kept and pruned hypotheses.
"""

STEP_HEADERS = ["step", "chosen token", "prob", "rank", "p after T", "p after cut", "tokens left", "entropy",
                "top candidates (prob)"]
SAMPLING_HEADERS = ("p after T", "p after cut", "tokens left")
OUTPUT_HEADERS = ["#", "text", "log-prob", "perplexity", "distinct-2", "distinct-3", "tokens"]
COMPARE_HEADERS = ["strategy", "text", "log-prob", "perplexity", "distinct-2", "distinct-3", "tokens", "tokens/s"]
DEFAULT_TEMPS = "0.5, 1.0, 2.0"


def _settings(strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty, no_repeat_ngram_size,
              early_stopping, num_return_sequences, repetition_penalty, seed, chat_template, top_n) -> dict:
    return {
        "strategy": strategy, "max_new_tokens": max_new_tokens, "temperature": temperature, "top_k": top_k,
        "top_p": top_p, "num_beams": num_beams, "length_penalty": length_penalty,
        "no_repeat_ngram_size": no_repeat_ngram_size, "early_stopping": early_stopping,
        "num_return_sequences": num_return_sequences, "repetition_penalty": repetition_penalty,
        "seed": seed if (seed is not None and str(seed).strip()) else None, "chat_template": chat_template,
        "top_n": top_n,
    }


def _parse_temps(text: str) -> list[float]:
    parts = [p for p in str(text or "").replace(";", ",").split(",") if p.strip()]
    if not parts:
        return [0.5, 1.0, 2.0]
    if len(parts) > 6:
        raise InputError("Give at most 6 temperatures for the overlay, e.g. 0.5, 1, 2.")
    temps = []
    for p in parts:
        try:
            t = float(p)
        except ValueError:
            raise InputError(f"{p.strip()!r} is not a temperature; write numbers like 0.5, 1, 2.") from None
        if t <= 0:
            raise InputError(f"Temperatures must be > 0 (got {t:g}); T -> 0 is greedy decoding.")
        temps.append(t)
    return temps


# ----------------------------------------------------------------------------- formatting


def steps_table(result: dict) -> pd.DataFrame:
    """The book's step table; the sampling columns appear only for sampling runs."""
    sampling = result["settings"]["strategy"] == "sample"
    rows = []
    for s in result["steps"]:
        row = {"step": s["step"], "chosen token": show_token(s["token"]), "prob": round(s["prob"], 4),
               "rank": s["rank"]}
        if sampling:
            row.update({"p after T": round(s["prob_temperature"], 4), "p after cut": round(s["prob_after_cut"], 4),
                        "tokens left": s["survivors"]})
        row["entropy"] = s["entropy"]
        row["top candidates (prob)"] = " · ".join(f"{show_token(c['token'])} {c['prob']:.3f}" for c in s["candidates"])
        rows.append(row)
    columns = STEP_HEADERS if sampling else [h for h in STEP_HEADERS if h not in SAMPLING_HEADERS]
    return pd.DataFrame(rows, columns=columns)


def outputs_table(result: dict) -> list[list]:
    return [[i + 1, o["text"], o["logprob"], o["perplexity"], o["distinct_2"], o["distinct_3"], o["n_tokens"]]
            for i, o in enumerate(result["outputs"])]


def stats_markdown(result: dict) -> str:
    finish = {"eos": "the model ended the text (EOS)", "length": "reached max_new_tokens",
              "stopped": "stopped by you", "time budget": "stopped at the time budget"}[result["finish_reason"]]
    lines = [
        f"**{md_text(result['label'])}** · **sequence log-prob** {result['sequence_logprob']:.3f} · "
        f"**perplexity** {result['perplexity']:.3f} · **distinct-2 / 3** {result['distinct_2']:.2f} / "
        f"{result['distinct_3']:.2f} · {result['n_new_tokens']} tokens in {result['generate_seconds']:.2f} s "
        f"(**{result['tokens_per_s']:.1f} tokens/s**) · {finish}",
    ]
    if result["settings"].get("seed") is not None and result["settings"]["strategy"] == "sample":
        lines.append(f"seed {result['settings']['seed']} (enter it to get the same text again)")
    lines += [f"⚠️ {md_text(w)}" for w in result["warnings"]]
    return "\n\n".join(lines)


def _dist_plots(ids: list[int], temps: list[float], top_p: float, temperature: float, step: int = 0):
    dist = decoding.step_distribution(ids, temperatures=temps, top_p=top_p, temperature=temperature, step=step)
    return temperature_figure(dist), cumulative_figure(dist)


def _cut_params(settings: dict) -> tuple[float, float]:
    """The top-p and temperature the cumulative plot shows: the run's, or 0.9 at T=1 when it did not sample."""
    if settings["strategy"] == "sample":
        return (settings["top_p"] if settings["top_p"] < 1 else 0.9), settings["temperature"]
    return 0.9, 1.0


# ----------------------------------------------------------------------------- handlers


@user_errors  # the run's time budget, and a cancel (Stop) that stops generation
def run(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty,
        no_repeat_ngram_size, early_stopping, num_return_sequences, repetition_penalty, seed, chat_template,
        top_n, temps_text):
    """Stream one run into the UI, then fill the table, plots and JSON."""
    try:
        settings = decoding.DecodeSettings.from_dict(_settings(
            strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty, no_repeat_ngram_size,
            early_stopping, num_return_sequences, repetition_penalty, seed, chat_template, top_n))
        temps = _parse_temps(temps_text)
        skip = [gr.skip()] * 9
        if settings.strategy == "beam" or settings.num_return_sequences > 1:
            yield ["", f"Running {settings.label()} (beam search shows its text when done)…", *skip]
        data = None
        with contextlib.closing(decoding.decode_stream(prompt, settings)) as stream:
            for text, res in stream:
                if res is None:
                    yield [text, gr.skip(), *skip]
                else:
                    data = res
        ids = data["prompt_token_ids"]
        top_p_cut, temp_cut = _cut_params(data["settings"])
        temp_fig, cum_fig = _dist_plots(ids, temps, top_p_cut, temp_cut)
        n = max(data["n_new_tokens"], 1)
        state = {"ids": ids + data["outputs"][0]["token_ids"], "plen": len(ids), "settings": data["settings"]}
        yield [
            data["text"],
            stats_markdown(data),
            model_badge(data["model"]),
            steps_table(data),
            gr.update(value=outputs_table(data), visible=len(data["outputs"]) > 1),
            temp_fig,
            cum_fig,
            beam_tree_figure(data.get("beam_tree")),
            data,
            state,
            gr.update(maximum=n - 1 if n > 1 else 1, value=0, interactive=n > 1),
        ]
    except LabError as exc:
        raise readable_error(exc, "run") from None


@user_errors
def show_step(state, step, temps_text):
    """Redraw the distribution plots for the context before generated token `step`."""
    if not state:
        raise InputError("Run a generation first; then pick a step to inspect.")
    temps = _parse_temps(temps_text)
    step = as_int("step", step or 0, lo=0)
    ids = state["ids"][: state["plen"] + step]
    top_p_cut, temp_cut = _cut_params(state["settings"])
    return _dist_plots(ids, temps, top_p_cut, temp_cut, step)


@user_errors
def compare_ui(prompt, strategies_text, progress=gr.Progress()):
    out = decoding.compare(prompt, strategies_text, progress=progress)
    rows = [[r["strategy"], r["text"], r["sequence_logprob"], r["perplexity"], r["distinct_2"], r["distinct_3"],
             r["n_new_tokens"], r["tokens_per_s"]] for r in out["rows"]]
    return rows, compare_figure(out["rows"]), out, model_badge(out["model"])


def apply_preset(name):
    preset = decoding.PRESETS.get(name)
    if not preset:
        return [gr.skip()] * 15
    s = decoding.DecodeSettings.from_dict(preset["settings"])
    return [preset["prompt"], s.strategy, s.max_new_tokens, s.temperature, s.top_k, s.top_p, s.num_beams,
            s.length_penalty, s.no_repeat_ngram_size, s.early_stopping, s.num_return_sequences,
            s.repetition_penalty, "" if s.seed is None else str(s.seed), s.chat_template, s.top_n]


# ----------------------------------------------------------------------------- API


@user_errors
def decode_api(prompt: str, settings: dict | str | None = None) -> dict:
    """One generation. settings: a dict like {"strategy": "beam", "num_beams": 4, "max_new_tokens": 64}
    (keys: strategy greedy|beam|sample, max_new_tokens, temperature, top_k, top_p, num_beams,
    length_penalty, no_repeat_ngram_size, early_stopping, num_return_sequences, repetition_penalty,
    seed, chat_template, top_n). Returns text, tokens, per-step candidates, log-prob, timing."""
    return decoding.decode(prompt, settings)


@user_errors
def _compare_api(prompt: str, strategies: list | str | None = None) -> dict:
    """2-4 strategies on one prompt, side by side. strategies: a list of settings dicts (as
    /decode takes) or its JSON text; left out, the book's greedy / beam / sampling trio.
    Returns {"prompt", "rows": one per strategy with text,
    sequence_logprob, perplexity, distinct_2, distinct_3, n_new_tokens, tokens_per_s, settings},
    "model"}."""
    return decoding.compare(prompt, decoding.COMPARE_DEFAULT if strategies is None else strategies)


# ----------------------------------------------------------------------------- layout


def build() -> None:
    gr.Markdown(INTRO)
    with gr.Row():
        with gr.Column(scale=3):
            prompt = Textbox(label="Prompt", lines=4, value="Transformers are the", elem_id="decoding-prompt")
            with gr.Row():
                preset = gr.Dropdown(choices=list(decoding.PRESETS), value=None, label="Book examples (presets)",
                                     elem_id="decoding-preset")
                chat = Checkbox(label="Use the model's chat template (instruct models)", value=False)
        with gr.Column(scale=2):
            strategy = Radio(choices=list(decoding.STRATEGIES), value="greedy", label="Strategy",
                                elem_id="decoding-strategy")
            max_new = Slider(1, decoding.MAX_NEW_TOKENS_CAP, value=32, step=1, label="max_new_tokens")
            seed = Textbox(label="seed (sampling; empty = random, reported)", value="", max_lines=1)
    with gr.Row():
        with gr.Column():
            gr.Markdown("**Sampling**")
            temperature = Slider(0, 3, value=1.0, step=0.05, label="temperature", elem_id="decoding-temperature")
            top_k = Slider(0, 200, value=0, step=1, label="top_k (0 = off)")
            top_p = Slider(0, 1, value=1.0, step=0.01, label="top_p (1 = off)")
        with gr.Column():
            gr.Markdown("**Beam search**")
            num_beams = Slider(2, decoding.MAX_BEAMS, value=4, step=1, label="num_beams")
            length_penalty = Slider(-2, 3, value=1.0, step=0.1, label="length_penalty")
            early_stopping = Checkbox(label="early_stopping", value=False)
        with gr.Column():
            gr.Markdown("**All strategies**")
            no_repeat = Slider(0, 6, value=0, step=1, label="no_repeat_ngram_size (0 = off)")
            rep_pen = Slider(0.5, 2.0, value=1.0, step=0.05, label="repetition_penalty (1 = off)")
            n_return = Slider(1, decoding.MAX_BEAMS, value=1, step=1, label="num_return_sequences")
            top_n = Slider(1, decoding.MAX_TOP_N, value=5, step=1, label="candidates per step in the table")
    with gr.Row():
        run_btn = gr.Button("Generate", variant="primary", elem_id="decoding-run")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="decoding-stop")

    text = Textbox(label="Generated text", lines=6, interactive=False, elem_id="decoding-text")
    stats = gr.Markdown(elem_id="decoding-stats")
    badge = gr.Markdown(elem_id="decoding-badge")
    outputs_df = gr.Dataframe(headers=OUTPUT_HEADERS, label="All returned sequences", visible=False,
                              interactive=False, wrap=True)
    steps_df = gr.Dataframe(headers=[h for h in STEP_HEADERS if h not in SAMPLING_HEADERS], label="Step by step (probabilities under the model; with sampling also "
                            "after temperature and after the top-k/top-p cut)", interactive=False, wrap=True,
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
    with gr.Accordion("Result as JSON (what /decode returns)", open=False):
        result_json = gr.JSON()
    state = gr.State(None)

    with gr.Accordion("Compare 2-4 strategies on this prompt", open=False, elem_id="decoding-compare"):
        strategies = gr.Code(value=json.dumps(decoding.COMPARE_DEFAULT, indent=1), language="json",
                             label="strategies (a JSON list of settings, as /decode takes)")
        cmp_btn = gr.Button("Compare", elem_id="decoding-compare-run")
        cmp_df = gr.Dataframe(headers=COMPARE_HEADERS, interactive=False, wrap=True, elem_id="decoding-compare-table")
        cmp_plot = gr.Plot(label="Strategies side by side")
        cmp_badge = gr.Markdown()
        with gr.Accordion("Compare result as JSON", open=False):
            cmp_json = gr.JSON()

    knobs = [strategy, max_new, temperature, top_k, top_p, num_beams, length_penalty, no_repeat, early_stopping,
             n_return, rep_pen, seed, chat, top_n]
    preset.change(apply_preset, [preset], [prompt, *knobs], api_visibility="private")
    run_event = run_btn.click(
        run, [prompt, *knobs, temps],
        [text, stats, badge, steps_df, outputs_df, temp_plot, cum_plot, tree_plot, result_json, state, step],
        api_visibility="private", **LONG_LANE,
    )
    stop_btn.click(None, None, None, cancels=[run_event], api_visibility="private")
    step.release(show_step, [state, step, temps], [temp_plot, cum_plot], api_visibility="private", **MODEL_QUEUE)
    temps.submit(show_step, [state, step, temps], [temp_plot, cum_plot], api_visibility="private", **MODEL_QUEUE)
    cmp_btn.click(compare_ui, [prompt, strategies], [cmp_df, cmp_plot, cmp_json, cmp_badge],
                  api_visibility="private", **LONG_LANE)

    # gr.api takes only the queue/concurrency part of the shared event settings
    def lane(q: dict) -> dict:
        return {k: v for k, v in q.items() if k in ("concurrency_limit", "concurrency_id", "queue")}

    gr.api(decode_api, api_name="decode", **lane(DECODE_LANE))  # long decodes also take the long lane's slot
    gr.api(_compare_api, api_name="compare_decoding", **lane(LONG_LANE))
