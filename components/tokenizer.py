"""Tokenizer explorer tab: the same text through WordPiece and byte-level BPE."""

from __future__ import annotations

import gradio as gr

from backend.tokens import tokenize
from backend.validation import as_bool
from components.common import Checkbox, Textbox, user_errors

EXAMPLES = [
    "Tokenizing text is a core task of NLP.",
    "Transformers are émouvants 🤗 — unbelievably tokenizable!",
    "time flies like an arrow; fruit flies like a banana",
]
COLORS = {"word": "#bfdbfe", "subword": "#fde68a", "special": "#fca5a5"}


def _pieces(result: dict) -> list[tuple[str, str]]:
    pieces = []
    for row in result["tokens"]:
        label = "special" if row["special"] else ("subword" if row["continuation"] else "word")
        pieces.append((row["token"], label))
    return pieces


def _summary(role: str, result: dict) -> str:
    m = result["model"]
    return (
        f"**{role}**: `{m['checkpoint']}` ({m['source']}) · {result['algorithm']} · vocabulary "
        f"{result['vocab_size']:,} · **{result['count']} tokens** ({result['special_count']} special) · "
        f"{result['tokens_per_word']} tokens per word"
    )


def _table(result: dict) -> list[list]:
    return [[r["index"], r["token"], r["id"], f"{r['start']}-{r['end']}", r["text"], r["special"]] for r in result["tokens"]]


@user_errors
def run(text: str, special: bool):
    data = tokenize(text, add_special_tokens=as_bool("special", special))
    enc, dec = data["results"]["encoder"], data["results"]["decoder"]
    return (
        _summary("Encoder", enc),
        _pieces(enc),
        _table(enc),
        _summary("Decoder", dec),
        _pieces(dec),
        _table(dec),
        data,
    )


def build() -> None:
    gr.Markdown(
        "Models read **tokens**, not characters. The encoder's WordPiece marks word pieces with `##`; "
        "the decoder's byte-level BPE marks a leading space with `Ġ`. Special tokens are red, "
        "word-continuations yellow."
    )
    with gr.Row():
        text = Textbox(label="Text", value=EXAMPLES[0], lines=3, elem_id="tok-text", scale=4)
        with gr.Column(scale=1):
            special = Checkbox(label="Add special tokens", value=True)
            go = gr.Button("Tokenize", variant="primary", elem_id="tok-go")
    gr.Examples(EXAMPLES, inputs=text)
    headers = ["#", "token", "id", "chars", "text", "special"]
    with gr.Row():
        with gr.Column():
            enc_md = gr.Markdown(elem_id="tok-enc-summary")
            enc_hl = gr.HighlightedText(label="Encoder tokens", color_map=COLORS, elem_id="tok-enc")
            enc_df = gr.Dataframe(headers=headers, label="Encoder ids and offsets", max_height=300)
        with gr.Column():
            dec_md = gr.Markdown(elem_id="tok-dec-summary")
            dec_hl = gr.HighlightedText(label="Decoder tokens", color_map=COLORS, elem_id="tok-dec")
            dec_df = gr.Dataframe(headers=headers, label="Decoder ids and offsets", max_height=300)
    with gr.Accordion("JSON (what /tokenize returns)", open=False):
        out_json = gr.JSON()
    outputs = [enc_md, enc_hl, enc_df, dec_md, dec_hl, dec_df, out_json]
    go.click(run, [text, special], outputs, api_name="tokenize")
    text.submit(run, [text, special], outputs, api_visibility="private")
