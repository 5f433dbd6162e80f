"""What the Decoding tab's events call: the streamed run, the step inspector, the comparison, the
presets, and the /decode and /compare_decoding API handlers (the tab declares each with its planner:
components/decoding/ui.py; served, each runs under its request's time budget, and a cancel (Stop) stops it)."""

from __future__ import annotations

import contextlib
import json
import re

import gradio as gr
import pandas as pd

from backend import decoding
from backend.runtime.errors import InputError, LabError
from backend.runtime.validation import as_int
from components.shell import server_or_long_slot, md_text, model_badge, readable_error
from components.shell.plans import current
from components.decoding.plots import (
    beam_tree_figure,
    compare_figure,
    cumulative_figure,
    empty_figure,
    temperature_figure,
)
from components.decoding.tables import (SAMPLING_HEADERS, STEP_HEADERS, outputs_table, stats_markdown, step_headers,
                                        step_widths, steps_table)


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


def run(prompt, strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty,
        no_repeat_ngram_size, early_stopping, num_return_sequences, repetition_penalty, seed, chat_template,
        top_n, precision, temps_text, model=""):
    """Stream one run into the UI, then fill the table, plots and JSON."""
    try:
        raw = _settings(strategy, max_new_tokens, temperature, top_k, top_p, num_beams, length_penalty,
                        no_repeat_ngram_size, early_stopping, num_return_sequences, repetition_penalty, seed,
                        chat_template, top_n, precision)
        settings = decoding.DecodeSettings.from_dict(raw)
        temps = _parse_temps(temps_text)
        skip = [gr.skip()] * 9
        label, total = settings.label(), settings.max_new_tokens
        streams = settings.strategy != "beam" and settings.num_return_sequences == 1
        yield blank_results(running_line(label, 0 if streams else None, total)) + [gr.skip()]
        data, n = None, 0
        model = (model or "").strip() or None
        # With a generation server this handler is in the decode lane: work that stays in this
        # process and is long (beam, 64+ tokens, a model-box model) first takes the long lane's slot.
        plan = current(lambda _: decoding.plan(raw, model), ())
        with server_or_long_slot(not plan.long, "generation"), \
                contextlib.closing(decoding.decode_stream(prompt, settings, model=model, plan=plan)) as stream:
            for text, res in stream:
                if res is None:
                    n += 1
                    yield [text, running_line(label, n, total), *skip, gr.skip()]
                else:
                    data = res
        ids = data["prompt_token_ids"]
        survivors = [s.get("survivors") for s in data["steps"]]
        temp_fig, cum_fig = _dist_plots(ids, temps, data["settings"], 0, survivors, model)
        headers = step_headers(data)
        n = max(data["n_new_tokens"], 1)
        state = {"ids": ids + data["outputs"][0]["token_ids"], "plen": len(ids), "settings": data["settings"],
                 "survivors": survivors, "model": model, "link_seed": seed_used(data)}
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
            state["link_seed"],  # the link carries the seed this run used, drawn ones included
        ]
    except LabError as exc:
        raise readable_error(exc, "run") from None


def seed_used(data: dict) -> str:
    """The seed a sampled run used (the one it drew when the seed box was empty), as its link carries it;
    '' for greedy and beam, which use none."""
    s = data.get("settings") or {}
    return str(s["seed"]) if s.get("strategy") == "sample" and s.get("seed") is not None else ""


def seed_from_link(value, state):
    """A link's seed (restored into the hidden holder the link reads) goes into the seed box, so Generate
    draws the same text again; the run's own write of the holder leaves the box as the learner left it
    (empty = a new draw next time)."""
    if not isinstance(value, str) or not value.strip():
        return gr.skip()
    if isinstance(state, dict) and state.get("link_seed") == value:
        return gr.skip()
    return value


def _decode_plan(args: tuple):
    """The run's plan from its positional inputs (prompt, the 14 knobs, precision, temps, model box)."""
    model = args[17] if len(args) > 17 else ""
    return decoding.plan(_settings(*args[1:16]), model if isinstance(model, str) else "")


def show_step(state, step, temps_text):
    """Redraw the distribution plots for the context before generated token `step`."""
    if not state:
        raise InputError("Run a generation first; then pick a step to inspect.")
    temps = _parse_temps(temps_text)
    step = as_int("step", step or 0, lo=0)
    ids = state["ids"][: state["plen"] + step]
    return _dist_plots(ids, temps, state["settings"], step, state.get("survivors"), state.get("model"))


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


def decode_api(prompt: str, settings: dict | str | None = None) -> dict:
    """One generation. settings: a dict like {"strategy": "beam", "num_beams": 4, "max_new_tokens": 64}
    (keys: strategy greedy|beam|sample, max_new_tokens, temperature, top_k, top_p, num_beams,
    length_penalty, no_repeat_ngram_size, early_stopping, num_return_sequences, repetition_penalty,
    seed, chat_template, top_n, precision fp32|int8). Returns text, tokens, per-step candidates,
    log-prob, timing; with precision int8 each step also has prob_int8 and prob_fp32."""
    return decoding.decode(prompt, settings, plan=current(_decode_api_plan, (prompt, settings)))


def _decode_api_plan(args: tuple):
    """/decode's plan from its positional inputs (prompt, settings)."""
    return decoding.plan(args[1] if len(args) > 1 else None)


def _compare_api(prompt: str, strategies: list | str | None = None) -> dict:
    """2-4 strategies on one prompt, side by side. strategies: a list of settings dicts (as
    /decode takes) or its JSON text; left out, the book's greedy / beam / sampling trio.
    Returns {"prompt", "rows": one per strategy with text,
    sequence_logprob, perplexity, distinct_2, distinct_3, n_new_tokens, tokens_per_s, settings},
    "model"}."""
    return decoding.compare(prompt, decoding.COMPARE_DEFAULT if strategies is None else strategies)
