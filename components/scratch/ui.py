"""From scratch tab (the book's chapter 10): train a tokenizer and watch its merges, then a tiny
GPT on the same text (gpt.py), then a tiny encoder-decoder on toy dates and its
cross-attention (seq2seq.py; what the two share: trained.py); last, chapter 11: a scaling law measured on a family of
tiny GPTs (scaling_ui.py) and the cost of attention with sparse and linear attention (attention_cost_ui.py)."""

from __future__ import annotations

import gradio as gr

from backend.scratch.contracts import CONTRACTS
from backend.scratch import DEFAULT_SENTENCE, MAX_CHARS, SHOWN_MERGES, scratch_source, split_after, train_tokenizer
from components import shell as common
from components.shell import code_view, runs
from components.shell.badge import model_time
from components.shell import SHORT_LANE, File, Radio, Slider, Textbox, error_box, file_path, md_text, raw_json
from components.shell.endpoint import Endpoint, Runs, declare
from components.scratch import gpt as scratch_gpt
from components.scratch import seq2seq as scratch_seq2seq
from components.scratch import attention_cost_ui, scaling_ui
from components.scratch.plots import lengths_figure, tokens_per_word_figure

LANE = getattr(common, "LONG_LANE", SHORT_LANE)  # training is long work: it queues with other long jobs
CORPORA = [("A short essay on tokenizers (3 KB)", "tokenizers"), ("The NLP glossary (62 KB)", "glossary"),
           ("The Train tab's sentences (140 KB)", "sentences"), ("Paste text", "paste"), ("Upload a .txt", "upload")]
START, CONTINUES, UNKNOWN, NEW = "word start", "continuation", "unknown", "newest step used here"
COLORS = {START: "#bfdbfe", CONTINUES: "#fde68a", UNKNOWN: "#fca5a5", NEW: "#86efac"}
MERGE_HEADERS, MERGE_WIDTHS = ["#", "left", "right", "count", "new token"], ["10%", "22%", "22%", "18%", "28%"]
PIECE_HEADERS, PIECE_WIDTHS = ["#", "piece", "log-probability"], ["15%", "45%", "40%"]
TPW_HEADERS, TPW_WIDTHS = ["tokenizer", "vocabulary", "tokens/word: sentence", "tokens/word: corpus"], \
    ["40%", "18%", "21%", "21%"]
INTRO = (
    "### Chapter 10: training a tokenizer from scratch\n"
    "Before the book trains a model from scratch it trains a **tokenizer** on the target text. BPE starts from "
    "single characters and, step by step, **merges** the most frequent pair of neighbouring tokens into a new "
    "one; WordPiece (BERT's) learns the same way here and marks word continuations with `##`; Unigram starts "
    "big and prunes, keeping a probability per piece. Train one, then drag the slider to replay how a sentence "
    "is split after the first N steps.")


def _chips(row: dict) -> list[tuple[str, str]]:
    new = row.get("new_token")
    return [(tok, NEW if new and tok == new else kind) for tok, kind in row["tokens"]]


def _caption(data: dict, row: dict, n: int) -> str:
    kind = "most probable pieces kept" if data["algorithm"] == "Unigram" else "merges"
    count = len(row["tokens"])
    made = f" · step {row['after']} added `{md_text(row['new_token'])}`" if row.get("new_token") else ""
    return f"After **{n:,}** of {data['steps']:,} {kind}: **{count} tokens**{made}"


def _summary(data: dict) -> str:
    c, v = data["corpus"], data["vocab_size"]
    text = (f"**{data['algorithm']}** trained on {md_text(c['what'])} ({c['chars']:,} characters, {c['words']:,} "
            f"words, {c['distinct_words']:,} distinct), **{model_time(data['seconds'])}**: vocabulary {v['learned']:,} "
            f"(asked {v['asked']:,}) = {data['lengths']['special']} special + {data['alphabet_size']:,} characters "
            f"+ {data['steps']:,} {data['step_kind']}.")
    if v["learned"] < v["asked"]:
        text += " The text ran out of pairs to merge (or pieces worth keeping) before the asked size."
    return text


def _check_line(check: dict, algorithm: str) -> str:
    where = (f"all {check['checked']:,} merges" if check["checked"] == check["library_merges"]
             else f"the first {check['checked']:,} of {check['library_merges']:,} merges (a bounded check)")
    if check["identical"]:
        line = (f"✅ On this corpus the from-scratch BPE below learned exactly the library's BPE merges: {where}, "
                f"same pairs in the same order (computed now, in {check['seconds']:.1f} s).")
        if algorithm == "WordPiece":
            line += (" (Checked against the library's BPE trainer: its WordPiece trainer is the same with `##`, "
                     "but numbers the `##` characters in hash order, so its ties break differently run to run.)")
        return line
    diff = check.get("first_difference", {})
    return (f"❌ On this corpus the from-scratch BPE differs from the library's BPE at merge {diff.get('rank')}: "
            f"ours {diff.get('scratch')}, the library's {diff.get('library')} (checked {where}).")


def _merges_table(data: dict) -> dict:
    if data["algorithm"] == "Unigram":
        rows = [[p["rank"], p["piece"], p["log_prob"]] for p in data["pieces"]]
        return gr.update(value={"data": rows, "headers": PIECE_HEADERS}, column_widths=PIECE_WIDTHS,
                         label="Unigram has no merges: its 50 most probable pieces")
    rows = [[m["rank"], m["left"], m["right"], m["count"], m["token"]] for m in data["merges"]]
    return gr.update(value={"data": rows, "headers": MERGE_HEADERS}, column_widths=MERGE_WIDTHS,
                     label=f"The first {SHOWN_MERGES} merges, in order (count: how often the pair occurred just before)")


def _tpw_table(rows: list[dict]) -> dict:
    data = [[r["what"] if r["tokenizer"] == "trained here" else f"{r['what']} ({r['tokenizer']})",
             f"{r['vocab_size']:,}", r["sentence"], r["corpus"]]
            if "error" not in r else [f"{r['what']}: {r['error']}", "", "", ""] for r in rows]
    return gr.update(value={"data": data, "headers": TPW_HEADERS}, column_widths=TPW_WIDTHS)


def run(algorithm: str = "BPE", vocab_size: float = 1000, corpus: str = "tokenizers", text: str = "",
        upload=None, sentence: str = DEFAULT_SENTENCE):
    """/train_tokenizer: train BPE, WordPiece or Unigram and return what it learned (JSON)."""
    data = train_tokenizer(algorithm, vocab_size, corpus, text, file_path(upload), sentence)
    timeline = data["replay"]["timeline"]
    last = split_after(timeline, data["steps"])
    label = "after N most probable pieces" if data["algorithm"] == "Unigram" else "after N merges"
    return (_summary(data), _merges_table(data), lengths_figure(data),
            gr.update(maximum=max(1, data["steps"]), value=data["steps"], label=label, interactive=True),
            _chips(last), _caption(data, last, data["steps"]), _tpw_table(data["tokens_per_word"]),
            tokens_per_word_figure(data["tokens_per_word"]), _check_line(data["scratch_check"], data["algorithm"]),
            {"algorithm": data["algorithm"], "steps": data["steps"], "timeline": timeline}, data)


def replay(state, n):
    """The chips after `n` steps, from the timeline already computed (no retraining)."""
    if not isinstance(state, dict) or not state.get("timeline"):
        return gr.update(), gr.update()
    try:
        n = max(0, min(int(float(n)), state["steps"]))
    except (TypeError, ValueError):
        return gr.update(), gr.update()
    row = split_after(state["timeline"], n)
    return _chips(row), _caption(state, row, n)


def _inputs():
    with gr.Row():
        with gr.Column(scale=1):
            algorithm = Radio(["BPE", "WordPiece", "Unigram"], value="BPE", label="Algorithm",
                              elem_id="scratch-algorithm")
            vocab = Slider(100, 8000, value=1000, step=100, label="Vocabulary size", elem_id="scratch-vocab")
            go = gr.Button("Train tokenizer", variant="primary", elem_id="scratch-go")
        with gr.Column(scale=2):
            corpus = Radio(CORPORA, value="tokenizers", label="Train on", elem_id="scratch-corpus")
            # the limit is said once, from the check that enforces it (the box stops at it too)
            text = Textbox(label="Pasted text (when 'Paste text' is chosen)", value="", lines=3, max_lines=8,
                           placeholder=f"Paste a few paragraphs or more (up to {MAX_CHARS:,} characters).",
                           max_length=MAX_CHARS, elem_id="scratch-text")
            upload = File(label="A .txt file (when 'Upload a .txt' is chosen)", file_types=[".txt"], height=130,
                          elem_id="scratch-upload")
            sentence = Textbox(label="Sentence to replay", value=DEFAULT_SENTENCE, elem_id="scratch-sentence")
    upload.upload(lambda: "upload", None, [corpus], api_visibility="private")
    text.input(lambda: "paste", None, [corpus], api_visibility="private")
    return go, [algorithm, vocab, corpus, text, upload, sentence]  # scratch_gpt.build reuses corpus, text, upload, vocab


def build() -> None:
    gr.Markdown(INTRO, elem_id="scratch-intro")
    go, inputs = _inputs()
    box = error_box(elem_id="scratch-error")
    summary = gr.Markdown(elem_id="scratch-summary")
    steps = Slider(0, 1, value=0, step=1, label="after N merges", interactive=False, elem_id="scratch-steps")
    caption = gr.Markdown(elem_id="scratch-caption")
    with gr.Row(max_height=260, elem_id="scratch-chips-box"):
        chips = gr.HighlightedText(label="How the sentence splits", color_map=COLORS, show_legend=True,
                                   show_inline_category=False, elem_id="scratch-chips")
    with gr.Row():
        merges = gr.Dataframe(headers=MERGE_HEADERS, label=f"The first {SHOWN_MERGES} merges", max_height=420, wrap=True,
                              column_widths=MERGE_WIDTHS, elem_id="scratch-merges")
        lengths = gr.Plot(label="Token lengths", elem_id="scratch-lengths")
    with gr.Row():
        tpw = gr.Dataframe(headers=TPW_HEADERS, label="Tokens per word against the app's real tokenizers", wrap=True,
                           column_widths=TPW_WIDTHS, elem_id="scratch-tpw")
        tpw_plot = gr.Plot(label="Tokens per word", elem_id="scratch-tpw-plot")
    with gr.Accordion("The from-scratch BPE (backend/engines/scratch/bpe.py): read it", open=False,
                      elem_id="scratch-code-box"):
        check = gr.Markdown(elem_id="scratch-check")
        gr.Code(scratch_source(), language="python", interactive=False, max_lines=40, elem_id="scratch-code")
    state = gr.State()
    out_json = raw_json("Raw result (JSON: what /train_tokenizer returns)", elem_id="scratch-json")
    code = code_view.view("scratch-tok")  # "The same in Python", under the raw result ("scratch-code" is the BPE's)
    outputs = [summary, merges, lengths, steps, chips, caption, tpw, tpw_plot, check, state, out_json]
    kept = runs.panel("scratch-tokenizer", link="scratch")  # the tab has no link yet
    names = ("algorithm", "vocab_size", "corpus", "text", "upload", "sentence")
    declare(Endpoint("train_tokenizer", run, dict(zip(names, inputs)), outputs, trigger=go, lane=LANE,
                     errors=box,  # the slider goes back to 0 and, with no timeline, replays nothing
                     result=out_json, code=code,
                     runs=Runs(kept, [summary, tpw, check]), contract=CONTRACTS["train_tokenizer"]))
    steps.input(replay, [state, steps], [chips, caption], api_visibility="private", trigger_mode="always_last",
                queue=False)
    _, vocab, corpus, text, upload, _ = inputs
    scratch_gpt.build(corpus, text, upload, vocab)  # the tiny GPT trains on the same text
    scratch_seq2seq.build()  # the tiny encoder-decoder trains on the shipped toy dates
    scaling_ui.build()  # chapter 11: a scaling law measured on a family of tiny GPTs
    attention_cost_ui.build()  # chapter 11: the cost of attention, sparse and linear attention
