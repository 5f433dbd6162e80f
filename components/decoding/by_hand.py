"""Decoding tab, "Decode by hand": choose each next token yourself, then compare with greedy.

UI wiring only; the work is `backend.decoding.decode_by_hand` (API `/decode_by_hand`). The
path (token ids and who chose each) lives in the session's state; every click sends the whole
path, so every number on screen is the backend's answer for exactly the path shown.
"""

from __future__ import annotations

import html

import gradio as gr
import pandas as pd

from backend.decoding.contracts import CONTRACTS
from backend import decoding
from backend.runtime.errors import InputError
from backend.runtime.validation import as_int
from components.shell import SHORT_LANE, Slider, Textbox, error_box, md_text, model_badge, raw_json
from components.shell.endpoint import Endpoint, declare
from components.decoding.plots import growth_figure, show_token

INTRO = """
**Decode by hand.** Start from the prompt above, pick the next token yourself from the model's
top-k (or type one), and watch the path's **sequence log-prob** next to **greedy's** for the same
number of tokens. *Continue greedily* or *Sample* adds tokens from where you are. Your own picks
are <mark class="tl-hand">marked</mark>; a token outside the model's top-k is outlined in red.
"""
CAND_HEADERS = ["rank", "token", "p", "log-prob"]
CAND_WIDTHS = ["12%", "40%", "24%", "24%"]
PATH_HEADERS = ["#", "token", "chosen by", "p", "log-prob", "rank", "in top-k"]
PATH_WIDTHS = ["7%", "25%", "16%", "14%", "14%", "12%", "12%"]
STYLE = """<style>
.tl-hand{background:#fde68a;color:#111;border-radius:3px;padding:0 1px}
.tl-greedy{text-decoration:underline dotted #2563eb}
.tl-sample{text-decoration:underline wavy #16a34a}
.tl-out{outline:2px solid #dc2626;outline-offset:1px}
.tl-prompt{color:#6b7280}
#decoding-hand-text{white-space:pre-wrap;line-height:1.8}
</style>"""


def _fmt(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-3 else f"{p:.2e}"


def _model(model) -> str | None:
    return (model or "").strip() or None if isinstance(model, str) or model is None else model


def _path(state, prompt, chat, model=None) -> tuple[list[int], list[str]]:
    """The path so far, or an empty one when the prompt, chat setting or model box changed since."""
    if (not state or state.get("prompt") != prompt or state.get("chat") != bool(chat)
            or state.get("model") != _model(model)):
        return [], []
    return list(state["ids"]), list(state["by"])


def marked_text(data: dict, by: list[str]) -> str:
    """The prompt (grey) and the path, each token a span: hand picks marked, outside the top-k outlined."""
    parts = [STYLE, '<div id="decoding-hand-text">', f'<span class="tl-prompt">{html.escape(data["prompt_text"])}</span>']
    for s, who in zip(data["steps"], by):
        cls = {"hand": "tl-hand", "greedy": "tl-greedy", "sample": "tl-sample"}.get(who, "")
        if not s["in_top_k"]:
            cls += " tl-out"
        title = f"step {s['step']} · {who} · p {_fmt(s['prob'])} · log-prob {s['logprob']:.3f} · rank {s['rank']}"
        parts.append(f'<span class="{cls.strip()}" title="{html.escape(title)}" data-step="{s["step"]}" '
                     f'data-by="{who}">{html.escape(s["token"])}</span>')
    parts.append("</div>")
    return "".join(parts)


def summary_markdown(data: dict, by: list[str]) -> str:
    n = len(data["path_token_ids"])
    g = data["greedy"]
    if not n:
        return f"**No token chosen yet.** Greedy would write: {md_text(g['text']) or '∅'}"
    hand = by.count("hand")
    lines = [f"**path log-prob {data['path_logprob']:.3f}** ({n} tokens, {hand} chosen by hand) · "
             f"**greedy's {g['logprob']:.3f}** ({g['n_tokens']} tokens) · difference "
             f"{data['path_logprob'] - g['logprob']:+.3f}"]
    left = data["left_top_k"]
    if left:
        first = data["steps"][left[0] - 1]
        rest = f", and at step{'s' if len(left) > 2 else ''} {', '.join(map(str, left[1:]))}" if len(left) > 1 else ""
        lines.append(f"Your path left the model's top {data['top_k']} at **step {left[0]}** "
                     f"({md_text(show_token(first['token']))} was its choice #{first['rank']}){rest}.")
    else:
        lines.append(f"Every token of the path was in the model's top {data['top_k']}.")
    lines.append(f"Greedy for as many tokens: {md_text(g['text'])}")
    if data.get("seed") is not None:
        lines.append(f"sampled with seed {data['seed']} (the full softmax: no temperature, no cut)")
    lines += [f"⚠️ {md_text(w)}" for w in data["warnings"]]
    return "\n\n".join(lines)


def candidates_table(data: dict) -> pd.DataFrame:
    return pd.DataFrame([[c["rank"], show_token(c["token"]), _fmt(c["prob"]), f"{c['logprob']:.3f}"]
                         for c in data["candidates"]], columns=CAND_HEADERS)


def path_table(data: dict, by: list[str]) -> pd.DataFrame:
    return pd.DataFrame([[s["step"], show_token(s["token"]), who, _fmt(s["prob"]), f"{s['logprob']:.3f}", s["rank"],
                          "yes" if s["in_top_k"] else "no"] for s, who in zip(data["steps"], by)],
                        columns=PATH_HEADERS)


def _show(data: dict, by: list[str], prompt, chat, model=None) -> list:
    choices = [(f"{c['rank']}. {show_token(c['token'])} (p {_fmt(c['prob'])})", str(c["token_id"]))
               for c in data["candidates"]]
    state = {"prompt": prompt, "chat": bool(chat), "ids": data["path_token_ids"], "by": by, "model": _model(model)}
    return [marked_text(data, by), summary_markdown(data, by), candidates_table(data), path_table(data, by),
            gr.update(choices=choices, value=choices[0][1] if choices else None), "", data,
            model_badge(data["model"]), state]


# ----------------------------------------------------------------------------- handlers


def start(prompt, chat, top_k, model=""):
    data = decoding.decode_by_hand(prompt, [], top_k, "step", chat_template=chat, model=_model(model))
    return _show(data, [], prompt, chat, model)


def take(state, prompt, chat, top_k, choice, typed, model=""):
    ids, by = _path(state, prompt, chat, model)
    typed = typed if isinstance(typed, str) else ""
    if typed:
        nxt = typed
    elif choice not in (None, ""):
        nxt = as_int("candidate", choice)
    else:
        raise InputError("Pick a candidate from the list (or type a token) first.")
    data = decoding.decode_by_hand(prompt, [*ids, nxt], top_k, "step", chat_template=chat, model=_model(model))
    return _show(data, by + ["hand"], prompt, chat, model)


def _go(action: str):
    def go(state, prompt, chat, top_k, n, seed, model=""):
        ids, by = _path(state, prompt, chat, model)
        data = decoding.decode_by_hand(prompt, ids, top_k, action, n, seed if action == "sample" else None,
                                       chat_template=chat, model=_model(model))
        return _show(data, by + [action] * data["added"], prompt, chat, model)

    go.__name__ = f"continue_{action}"
    return go


def undo(state, prompt, chat, top_k, model=""):
    ids, by = _path(state, prompt, chat, model)
    data = decoding.decode_by_hand(prompt, ids[:-1], top_k, "step", chat_template=chat, model=_model(model))
    return _show(data, by[:-1], prompt, chat, model)


def decode_by_hand_api(prompt: str, path: list | str | None = None, top_k: int = 10, action: str = "step",
                       n: int = 8, seed: int | None = None, chat_template: bool = False) -> dict:
    """Decode by hand. path: the tokens chosen so far after the prompt, a JSON list of token ids
    and/or single-token strings (e.g. [504, " the"]); action "step" scores it and lists the next
    token's top_k candidates, "greedy" / "sample" (seed) first adds n tokens. Returns per-token
    log-prob and rank, path_logprob next to greedy's for as many tokens, left_top_k (the steps
    whose token was outside the top_k), candidates, text, model."""
    return decoding.decode_by_hand(prompt, path, top_k, action, n, seed, chat_template)


def growth(state, prompt, chat, n, layer, head, use_path, model=""):
    """Attention while generating: greedy for n tokens, or the decode-by-hand path shown above."""
    ids, _ = _path(state, prompt, chat, model) if use_path else ([], [])
    if use_path and not ids:
        raise InputError("There is no path yet: start decoding by hand above, or show greedy's attention.")
    data = decoding.generation_attention(prompt, n, layer, head, ids or None, chat_template=chat, model=_model(model))
    line = (f"**{len(data['rows'])} rows** ({'your path' if data['source'] == 'path' else 'greedy'}: "
            f"{md_text(data['text'])}) · layer {data['layer']} of {data['num_layers']}, "
            f"{'mean over ' + str(data['num_heads']) + ' heads' if data['head'] == 'mean' else 'head ' + str(data['head'])}"
            f"\n\n{md_text(data['note'])}")
    return growth_figure(data), line, data


def generation_attention_api(prompt: str, n: int = 16, layer: int = -1, head: int | str | None = None,
                             path: list | str | None = None, chat_template: bool = False) -> dict:
    """Attention while generating: greedy for n (<= 32) tokens, or the given path (token ids or
    single-token strings), and each new token's attention row over every token before it at
    `layer` (-1: the last) for `head` (None, -1 or "mean": the mean over heads). Returns tokens,
    prompt_len, generated, rows (None right of the diagonal), layer, head, note, model."""
    return decoding.generation_attention(prompt, n, layer, head, path, chat_template)


# ----------------------------------------------------------------------------- layout


def build(prompt, chat, model_box=None) -> None:
    """The accordions; `prompt`, `chat` and `model_box` are the Decoding tab's own prompt box, chat
    checkbox and model box (this accordion runs on the same model as the tab)."""
    model_box = model_box if model_box is not None else gr.State("")
    with gr.Accordion("Decode by hand: choose each next token yourself", open=False, elem_id="decoding-hand"):
        gr.Markdown(INTRO)
        with gr.Row():
            top_k = Slider(2, decoding.BY_HAND_MAX_TOP_K, value=10, step=1, label="top-k candidates to show",
                           elem_id="decoding-hand-topk")
            n = Slider(1, decoding.BY_HAND_MAX_CONTINUE, value=8, step=1, label="tokens to continue",
                       elem_id="decoding-hand-n")
            seed = Textbox(label="seed for Sample (empty = random, reported)", value="", max_lines=1,
                           elem_id="decoding-hand-seed")
        with gr.Row():
            start_btn = gr.Button("Start from the prompt", variant="primary", elem_id="decoding-hand-start")
            pick = gr.Dropdown(choices=[], label="next token (the model's top-k)", elem_id="decoding-hand-pick")
            typed = Textbox(label="…or type a token", max_lines=1, elem_id="decoding-hand-typed")
        with gr.Row():
            take_btn = gr.Button("Take it", variant="primary", elem_id="decoding-hand-take")
            greedy_btn = gr.Button("Continue greedily", elem_id="decoding-hand-greedy")
            sample_btn = gr.Button("Sample", elem_id="decoding-hand-sample")
            undo_btn = gr.Button("Undo last token", elem_id="decoding-hand-undo")
        box = error_box("decoding-hand-error")
        text = gr.HTML(elem_id="decoding-hand-html")
        summary = gr.Markdown(elem_id="decoding-hand-summary")
        with gr.Row():
            cands = gr.Dataframe(headers=CAND_HEADERS, label="Next-token candidates", interactive=False, wrap=True,
                                 column_widths=CAND_WIDTHS, elem_id="decoding-hand-candidates")
            steps = gr.Dataframe(headers=PATH_HEADERS, label="The path, token by token", interactive=False,
                                 wrap=True, column_widths=PATH_WIDTHS, max_height=420, elem_id="decoding-hand-path")
        badge = gr.Markdown(elem_id="decoding-hand-badge")
        result = raw_json("Raw result (JSON: what /decode_by_hand returns)")
        state = gr.State(None)

    with gr.Accordion("Attention while generating: what each new token's step looked at", open=False,
                      elem_id="decoding-growth"):
        with gr.Row():
            g_n = Slider(1, decoding.GROWTH_MAX_NEW, value=16, step=1, label="greedy tokens",
                         elem_id="decoding-growth-n")
            g_layer = Slider(-1, 63, value=-1, step=1, label="layer (-1 = the last)", elem_id="decoding-growth-layer")
            g_head = Slider(-1, 63, value=-1, step=1, label="head (-1 = mean over heads)",
                            elem_id="decoding-growth-head")
        with gr.Row():
            g_greedy = gr.Button("Show for greedy", variant="primary", elem_id="decoding-growth-greedy")
            g_path = gr.Button("Show for the decode-by-hand path", elem_id="decoding-growth-path")
        g_box = error_box("decoding-growth-error")
        g_line = gr.Markdown(elem_id="decoding-growth-line")
        g_plot = gr.Plot(label="Attention while generating", elem_id="decoding-growth-plot")
        g_json = raw_json("Raw result (JSON: what /generation_attention returns)")
    g_ins = {"state": state, "prompt": prompt, "chat": chat, "n": g_n, "layer": g_layer, "head": g_head}
    for btn, use_path in ((g_greedy, False), (g_path, True)):
        declare(Endpoint(None, growth, {**g_ins, "use_path": gr.State(use_path), "model": model_box},
                         [g_plot, g_line, g_json], trigger=btn, lane=SHORT_LANE, errors=g_box))

    outs = [text, summary, cands, steps, pick, typed, result, badge, state]
    shown = [text, summary, cands, steps, result, badge]
    path = {"state": state, "prompt": prompt, "chat": chat, "top_k": top_k}
    for fn, btn, inputs in (
        (start, start_btn, {"prompt": prompt, "chat": chat, "top_k": top_k, "model": model_box}),
        (take, take_btn, {**path, "choice": pick, "typed": typed, "model": model_box}),
        (_go("greedy"), greedy_btn, {**path, "n": n, "seed": seed, "model": model_box}),
        (_go("sample"), sample_btn, {**path, "n": n, "seed": seed, "model": model_box}),
        (undo, undo_btn, {**path, "model": model_box}),
    ):
        declare(Endpoint(None, fn, inputs, outs, trigger=btn, lane=SHORT_LANE, errors=box, cleared=shown))
    lane = {k: v for k, v in SHORT_LANE.items() if k in ("concurrency_limit", "concurrency_id", "queue")}
    declare(Endpoint("decode_by_hand", decode_by_hand_api, {}, [], lane=lane, contract=CONTRACTS["decode_by_hand"]))
    declare(Endpoint("generation_attention", generation_attention_api, {}, [], lane=lane, contract=CONTRACTS["generation_attention"]))
