"""The Decoding tab: type a prompt, pick a strategy, and see why the text came out as it did.

UI wiring only; the work is in `backend.decoding`. API endpoints (plain JSON in and out):
`/decode` (prompt + one settings dict) and `/compare_decoding` (prompt + 2-4 settings dicts).
The Run button streams text token by token (greedy and sampling); its event is not an API.
"""

from __future__ import annotations

import contextlib
import json
import re

import gradio as gr
import pandas as pd

from backend import decoding
from backend.runtime.errors import InputError, LabError
from backend.runtime.validation import as_int
from components.decoding import by_hand as decoding_by_hand
from components.shell import links
from components.shell import (
    DECODE_LANE, LONG_LANE, SHORT_DECODE_TOKENS, SHORT_LANE, Checkbox, CheckboxGroup, Radio, Slider, Textbox, clear_on_error,
    decode_lane_reader, engine_lane, engine_or_long_slot, error_box, md_text, model_badge, raw_json, readable_error,
    user_errors,
)
from components.decoding.plots import (
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

# Short headers, key columns first, the long candidates list last (it wraps).
STEP_HEADERS = ["#", "token", "p", "p (T)", "p (cut)", "left", "rank", "entropy", "top candidates (p)"]
SAMPLING_HEADERS = ("p (T)", "p (cut)", "left")
# Widths in % of the table's width, so the table never needs horizontal scrolling; the candidate
# list takes what is left and wraps.
STEP_WIDTHS = {"#": 4, "token": 12, "p": 7, "p (T)": 7, "p (cut)": 7, "left": 6, "rank": 5, "entropy": 9}
OUTPUT_HEADERS = ["#", "log-prob", "ppl", "dist-2", "dist-3", "tokens", "text"]
OUTPUT_WIDTHS = ["4%", "9%", "9%", "8%", "8%", "8%", "54%"]
COMPARE_HEADERS = ["strategy", "log-prob", "ppl", "dist-2", "dist-3", "tokens", "tok/s", "text"]
COMPARE_WIDTHS = ["16%", "8%", "8%", "7%", "7%", "7%", "7%", "40%"]
DEFAULT_TEMPS = "0.5, 1.0, 2.0"


def _settings(strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty, no_repeat_ngram_size,
              early_stopping, num_return_sequences, repetition_penalty, seed, chat_template, top_n,
              precision="fp32") -> dict:
    return {
        "strategy": strategy, "max_new_tokens": max_new_tokens, "temperature": temperature, "top_k": top_k,
        "top_p": top_p, "num_beams": num_beams, "length_penalty": length_penalty,
        "no_repeat_ngram_size": no_repeat_ngram_size, "early_stopping": early_stopping,
        "num_return_sequences": num_return_sequences, "repetition_penalty": repetition_penalty,
        "seed": seed if (seed is not None and str(seed).strip()) else None, "chat_template": chat_template,
        "top_n": top_n, "precision": precision,
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


def fmt_prob(p) -> str:
    """A probability for a table: 4 decimals, or scientific notation for a rare token (not "0")."""
    if p is None:
        return ""
    if p == 0:
        return "0"
    return f"{p:.4f}" if p >= 1e-3 else f"{p:.2e}"


def _prob_headers(result: dict) -> list[str]:
    """"p", or one column per precision when the other precision re-scored the tokens."""
    info = result.get("precision") or {}
    if info.get("other"):
        return [f"p {info['generated']}", f"p {info['other']}"]
    return ["p"]


def step_headers(result: dict) -> list[str]:
    sampling = result["settings"]["strategy"] == "sample"
    out = []
    for h in STEP_HEADERS:
        if h in SAMPLING_HEADERS and not sampling:
            continue
        out += _prob_headers(result) if h == "p" else [h]
    return out


def step_widths(headers: list[str]) -> list[str]:
    """Column widths in %: fixed for the short columns, the rest for the candidate list."""
    fixed = [STEP_WIDTHS.get(h, 7 if h.startswith("p ") else None) for h in headers]
    rest = 100 - sum(w for w in fixed if w)
    return [f"{w if w else rest}%" for w in fixed]


def steps_table(result: dict) -> pd.DataFrame:
    """The book's step table; the sampling columns appear only for sampling runs, a second
    probability column for an int8 run (the fp32 model's probability of the same token)."""
    sampling = result["settings"]["strategy"] == "sample"
    probs = _prob_headers(result)
    rows = []
    for s in result["steps"]:
        row = {"#": s["step"], "token": show_token(s["token"])}
        if len(probs) == 1:
            row["p"] = fmt_prob(s["prob"])
        else:
            for h in probs:
                row[h] = fmt_prob(s.get("prob_" + h.split(" ", 1)[1]))
        if sampling:
            row.update({"p (T)": fmt_prob(s["prob_temperature"]), "p (cut)": fmt_prob(s["prob_after_cut"]),
                        "left": s["survivors"]})
        row["rank"] = s["rank"]
        row["entropy"] = s["entropy"]
        row["top candidates (p)"] = " · ".join(f"{show_token(c['token'])} {fmt_prob(c['prob'])}"
                                               for c in s["candidates"])
        rows.append(row)
    return pd.DataFrame(rows, columns=step_headers(result))


def outputs_table(result: dict) -> list[list]:
    return [[i + 1, o["logprob"], o["perplexity"], o["distinct_2"], o["distinct_3"], o["n_tokens"], o["text"]]
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
    info = result.get("precision") or {}
    if info.get("other"):
        lines.append(f"generated with **{info['generated']}** weights; the {info['other']} model re-scored the same "
                     f"tokens in one forward pass: its sequence log-prob {info['other_sequence_logprob']:.3f}, largest "
                     f"per-step probability difference {info['max_abs_prob_diff']:.4f}")
    engine = result.get("engine") or {}
    if engine.get("kind") not in (None, "in-process"):
        lines.append(f"generated by the **{md_text(engine['kind'])} engine** at {md_text(engine.get('url'))} "
                     f"({md_text(engine.get('model'))}); tokens/s is the wall time of that HTTP call")
    lines += [f"⚠️ {md_text(w)}" for w in result["warnings"]]  # an in-process run's note says why it ran here
    return "\n\n".join(lines)


def _dist_plots(ids: list[int], temps: list[float], settings: dict, step: int = 0, survivors: list | None = None,
                model: str | None = None):
    """The two plots before generated token `step`, by the model that ran (`model`: its model box);
    `survivors`: the run's "tokens left" per step."""
    top_p, temperature, top_k = _cut_params(settings)
    dist = decoding.step_distribution(ids, temperatures=temps, top_p=top_p, temperature=temperature, step=step,
                                      top_k=top_k, precision=settings.get("precision", "fp32"), model=model)
    left = survivors[step] if survivors and step < len(survivors) else None
    return temperature_figure(dist), cumulative_figure(dist, settings["strategy"], left)


def _cut_params(settings: dict) -> tuple[float, float, int]:
    """The run's own top-p, temperature and top-k for the cumulative plot; off (1, T=1, 0) when it did not sample."""
    if settings["strategy"] == "sample":
        return settings["top_p"], settings["temperature"], settings["top_k"]
    return 1.0, 1.0, 0


# ----------------------------------------------------------------------------- the run on screen
# While a run streams, the stats line says what is running and how far it got ("▶ ..."); Stop turns
# that line into a partial run's line (this run's label and token count), never the previous run's.
RUNNING = "▶"
STOPPED = "■"
_RUNNING_TOKENS = re.compile(r"· (\d+) / (\d+) new tokens")


def running_line(label: str | None = None, n: int | None = None, total: int | None = None) -> str:
    """The stats line while a run is queued, loading, or streaming token `n` of `total`."""
    if label is None:
        return f"{RUNNING} waiting for the model… (Stop cancels)"
    if n is None:
        return f"{RUNNING} **{md_text(label)}** · running (beam search shows its text when done)…"
    return f"{RUNNING} **{md_text(label)}** · {n} / {total} new tokens so far…"


def stopped_line(line) -> str | object:
    """The stats line after Stop, from the line of the run Stop interrupted: this run's label and how
    many tokens it streamed, labelled partial. A finished run's line (not "▶") is left as it is."""
    line = line if isinstance(line, str) else ""
    if not line.startswith(RUNNING):
        return gr.skip()  # the run had already finished: its stats are true
    label = re.search(r"\*\*(.+?)\*\*", line)
    who = f"**{label.group(1)}** · " if label else ""
    tokens = _RUNNING_TOKENS.search(line)
    if tokens:
        n, total = int(tokens.group(1)), int(tokens.group(2))
        return (f"{STOPPED} {who}**stopped by you after {n} of {total} new tokens**: a partial run, its text "
                "is above. The log-prob, step table and plots come with a finished run (lower max_new_tokens "
                "for a quicker one).")
    if label:
        return (f"{STOPPED} {who}**stopped by you before it finished**: beam search shows its text only "
                "at the end, so there is nothing to show.")
    return f"{STOPPED} **stopped by you before the run started**: nothing was generated."


def blank_results(line: str) -> list:
    """Every output of a run, blanked, with `line` as the stats: no earlier run's result stays on
    screen beside this one's text."""
    headers = [h for h in STEP_HEADERS if h not in SAMPLING_HEADERS]
    return [
        "", line, "",
        gr.update(value=pd.DataFrame(columns=headers), headers=headers, column_widths=step_widths(headers)),
        gr.update(value=None, visible=False),
        None, None, empty_figure("Run beam search to see the beam tree."), None,
        None, gr.update(value=0, maximum=1, interactive=False),
    ]


def knob_updates(strategy) -> list:
    """Which knobs the strategy reads: the others are greyed out (the API still accepts and
    checks them). Greedy returns exactly one sequence, so its num_return_sequences is 1."""
    sample, beam = strategy == "sample", strategy == "beam"
    on_off = "" if sample else f" · not used by {md_text(strategy)}"
    beam_off = "" if beam else f" · not used by {md_text(strategy)}"
    return [
        f"**Sampling**{on_off}", gr.update(interactive=sample), gr.update(interactive=sample),
        gr.update(interactive=sample), gr.update(interactive=sample),
        f"**Beam search**{beam_off}", gr.update(interactive=beam), gr.update(interactive=beam),
        gr.update(interactive=beam),
        gr.update(interactive=True) if strategy != "greedy" else gr.update(value=1, interactive=False),
    ]


# ----------------------------------------------------------------------------- handlers


@user_errors  # the run's time budget, and a cancel (Stop) that stops generation
def run(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty,
        no_repeat_ngram_size, early_stopping, num_return_sequences, repetition_penalty, seed, chat_template,
        top_n, precision, temps_text, model=""):
    """Stream one run into the UI, then fill the table, plots and JSON."""
    try:
        settings = decoding.DecodeSettings.from_dict(_settings(
            strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty, no_repeat_ngram_size,
            early_stopping, num_return_sequences, repetition_penalty, seed, chat_template, top_n, precision))
        temps = _parse_temps(temps_text)
        skip = [gr.skip()] * 9
        label, total = settings.label(), settings.max_new_tokens
        streams = settings.strategy != "beam" and settings.num_return_sequences == 1
        yield blank_results(running_line(label, 0 if streams else None, total))
        data, n = None, 0
        model = (model or "").strip() or None
        # With a generation engine this handler is in the decode lane: work that stays in this
        # process and is long (beam, 64+ tokens, a model-box model) first takes the long lane's slot.
        on_engine = model is None and decoding.runs_on_engine(settings)
        with engine_or_long_slot(on_engine or not _long_here(settings), "generation"), \
                contextlib.closing(decoding.decode_stream(prompt, settings, model=model)) as stream:
            for text, res in stream:
                if res is None:
                    n += 1
                    yield [text, running_line(label, n, total), *skip]
                else:
                    data = res
        ids = data["prompt_token_ids"]
        survivors = [s.get("survivors") for s in data["steps"]]
        temp_fig, cum_fig = _dist_plots(ids, temps, data["settings"], 0, survivors, model)
        headers = step_headers(data)
        n = max(data["n_new_tokens"], 1)
        state = {"ids": ids + data["outputs"][0]["token_ids"], "plen": len(ids), "settings": data["settings"],
                 "survivors": survivors, "model": model}
        yield [
            data["text"],
            stats_markdown(data),
            model_badge(data["model"]),
            gr.update(value=steps_table(data), headers=headers, column_widths=step_widths(headers)),
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


def _long_here(settings) -> bool:
    return (settings.max_new_tokens >= SHORT_DECODE_TOKENS or settings.strategy == "beam"
            or settings.num_return_sequences > 1)


def _lane_settings(args: tuple) -> tuple[dict, bool]:
    """The run's settings from its positional inputs (prompt, the 14 knobs, precision, temps, model),
    and whether the engine may run it: what the decode lane's admission needs."""
    model = args[17] if len(args) > 17 else ""
    return _settings(*args[1:16]), not (isinstance(model, str) and model.strip())


decode_lane_reader(run, _lane_settings)


@user_errors
def show_step(state, step, temps_text):
    """Redraw the distribution plots for the context before generated token `step`."""
    if not state:
        raise InputError("Run a generation first; then pick a step to inspect.")
    temps = _parse_temps(temps_text)
    step = as_int("step", step or 0, lo=0)
    ids = state["ids"][: state["plen"] + step]
    return _dist_plots(ids, temps, state["settings"], step, state.get("survivors"), state.get("model"))


@user_errors
def compare_ui(prompt, strategies_text, model="", progress=gr.Progress()):
    out = decoding.compare(prompt, strategies_text, progress=progress, model=(model or "").strip() or None)
    rows = [[r["strategy"], r["sequence_logprob"], r["perplexity"], r["distinct_2"], r["distinct_3"],
             r["n_new_tokens"], r["tokens_per_s"], r["text"]] for r in out["rows"]]
    return rows, compare_figure(out["rows"]), out, model_badge(out["model"])


PRESET_PROMPT = "Choose one of the book's examples…"  # shown until one is picked (a dropdown has no placeholder)

# The comparison's picker: named settings that build the JSON list /compare_decoding takes.
COMPARE_CHOICES: dict[str, dict] = {
    "greedy": {"strategy": "greedy", "max_new_tokens": 64},
    "beam 4, no-repeat 2": {"strategy": "beam", "num_beams": 4, "no_repeat_ngram_size": 2, "max_new_tokens": 64},
    "beam 4": {"strategy": "beam", "num_beams": 4, "max_new_tokens": 64},
    "sample, top-p 0.9 (seed 42)": {"strategy": "sample", "top_p": 0.9, "max_new_tokens": 64, "seed": 42},
    "sample, top-k 50 (seed 42)": {"strategy": "sample", "top_k": 50, "max_new_tokens": 64, "seed": 42},
    "sample, T = 0.7 (seed 42)": {"strategy": "sample", "temperature": 0.7, "top_k": 0, "max_new_tokens": 64,
                                  "seed": 42},
    "sample, T = 2.0 (seed 42)": {"strategy": "sample", "temperature": 2.0, "top_k": 0, "max_new_tokens": 64,
                                  "seed": 42},
}
COMPARE_PICKED = [name for name, s in COMPARE_CHOICES.items() if s in decoding.COMPARE_DEFAULT]


def picked_strategies(names):
    """The JSON box for the ticked strategies, in the picker's order (untouched outside 2-4)."""
    names = names if isinstance(names, (list, tuple)) else []
    chosen = [COMPARE_CHOICES[n] for n in COMPARE_CHOICES if n in names]
    if not 2 <= len(chosen) <= 4:
        return gr.skip()
    return json.dumps(chosen, indent=1)


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
    seed, chat_template, top_n, precision fp32|int8). Returns text, tokens, per-step candidates,
    log-prob, timing; with precision int8 each step also has prob_int8 and prob_fp32."""
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
    with gr.Row():
        run_btn = gr.Button("Generate", variant="primary", elem_id="decoding-run")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="decoding-stop")

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

    decoding_by_hand.build(prompt, chat, model_box)  # its own accordion and /decode_by_hand

    knobs = [strategy, max_new, temperature, top_k, top_p, num_beams, length_penalty, no_repeat, early_stopping,
             n_return, rep_pen, seed, chat, top_n]
    preset.change(apply_preset, [preset], [prompt, *knobs], api_visibility="private")
    results = [text, stats, badge, steps_df, outputs_df, temp_plot, cum_plot, tree_plot, result_json]
    strategy.change(knob_updates, [strategy], [sampling_head, temperature, top_k, top_p, seed, beam_head, num_beams,
                                               length_penalty, early_stopping, n_return],
                    api_visibility="private", queue=False)
    # Generate first blanks the last run's result (at once, even while this run waits for the model),
    # then streams; Stop cancels the stream first, then rewrites its "▶" line as this run's partial line.
    run_event = run_btn.click(
        lambda: blank_results(running_line()), None, [*results, state, step], api_visibility="private", queue=False,
    ).then(run, [prompt, *knobs, precision, temps, model_box], [*results, state, step], api_visibility="private",
           **engine_lane())  # without an engine the long lane, as before; with one, the decode lane
    clear_on_error(run_event, results, box)
    stop_btn.click(None, None, None, cancels=[run_event], api_visibility="private")
    stop_btn.click(stopped_line, [stats], [stats], api_visibility="private", queue=False)
    # the number box fires `input` as it is typed in (its `release` only on blur); the slider on a drag
    step.input(show_step, [state, step, temps], [temp_plot, cum_plot], api_visibility="private",
               trigger_mode="always_last", **SHORT_LANE)
    temps.submit(show_step, [state, step, temps], [temp_plot, cum_plot], api_visibility="private", **SHORT_LANE)
    picker.input(picked_strategies, [picker], [strategies], api_visibility="private", queue=False)
    cmp_event = cmp_btn.click(compare_ui, [prompt, strategies, model_box], [cmp_df, cmp_plot, cmp_json, cmp_badge],
                              api_visibility="private", **LONG_LANE)
    clear_on_error(cmp_event, [cmp_df, cmp_plot, cmp_json, cmp_badge], cmp_box)

    # gr.api takes only the queue/concurrency part of the shared event settings
    def lane(q: dict) -> dict:
        return {k: v for k, v in q.items() if k in ("concurrency_limit", "concurrency_id", "queue")}

    links.model_box("decoding", model_box)
    links.register("decoding", {"prompt": prompt, "strategy": strategy, "max_new": max_new, "temperature": temperature,
                                "top_k": top_k, "top_p": top_p, "num_beams": num_beams,
                                "length_penalty": length_penalty, "no_repeat": no_repeat,
                                "early_stopping": early_stopping, "n_return": n_return, "rep_pen": rep_pen,
                                "seed": seed, "chat": chat, "top_n": top_n, "precision": precision},
                   [run_event], link_bar)
    gr.api(decode_api, api_name="decode", **lane(DECODE_LANE))  # long decodes also take the long lane's slot
    gr.api(_compare_api, api_name="compare_decoding", **lane(LONG_LANE))
