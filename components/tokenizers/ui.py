"""Tokenizer explorer tab: the same text through WordPiece, byte-level BPE and SentencePiece."""

from __future__ import annotations

import gradio as gr

from backend.tokenizers.contracts import CONTRACTS
from backend.tokenizers.api import tokenize
from backend.runtime.validation import as_bool
from components.shell import code_view, links, runs
from components.shell import Checkbox, Textbox, error_box, notice_line, raw_json
from components.shell.endpoint import Endpoint, Link, Notice, Runs, declare

EXAMPLES = [
    "Tokenizing text is a core task of NLP.",
    "Transformers are émouvants 🤗 — unbelievably tokenizable!",
    "time flies like an arrow; fruit flies like a banana",
    "Jeff Dean ist ein Informatiker bei Google in Kalifornien",
]
WORD, SUBWORD, SPECIAL, BYTES = "word start", "word continuation", "special", "byte piece (part of a character)"
COLORS = {WORD: "#bfdbfe", SUBWORD: "#fde68a", SPECIAL: "#fca5a5", BYTES: "#d8b4fe"}
HEADERS = ["#", "token", "text", "bytes", "id", "chars", "special"]
WIDTHS = ["7%", "20%", "20%", "19%", "12%", "12%", "10%"]
NO_BYTES_HEADERS = [h for h in HEADERS if h != "bytes"]
NO_BYTES_WIDTHS = ["8%", "28%", "28%", "14%", "12%", "10%"]
NO_BYTES_NOTE = "no bytes column: {algorithm} works on characters, not bytes"
BYTE_LEVEL_NOTE = (
    "**Byte-level BPE** cuts the text's UTF-8 *bytes*, not its characters, and prints each byte as one "
    "visible character: `Ġ` is a space, and a character outside ASCII (é, —, 🤗) takes 2-4 bytes, so its "
    "pieces look like `Ã©` or `ðŁ`. Tick *Show decoded bytes* to see what each piece stands for.")
# Chips and table rows shown per tokenizer: a long text makes thousands of tokens, more than a person reads
# in a box (and each costs the server and the browser); counts and the raw result cover every token.
SHOWN = 1000


def _label(row: dict) -> str:
    if row["special"]:
        return SPECIAL
    if row.get("byte_fragment"):
        return BYTES
    return SUBWORD if row["continuation"] else WORD


def _pieces(result: dict, show_bytes: bool) -> list[tuple[str, str]]:
    """Chips for gr.HighlightedText: the token as the vocabulary spells it, or what its bytes read as."""
    return [((row.get("decoded", row["token"]) if show_bytes else row["token"]), _label(row))
            for row in result["tokens"][:SHOWN]]


def _summary(role: str, result: dict) -> str:
    m = result["model"]
    fragments = sum(bool(r.get("byte_fragment")) for r in result["tokens"])
    if result.get("tokens_per_word") is None:  # an empty (or blank) text: no words, no ratio
        ratio = ("the text is empty: " + ("only the special tokens, " if result["count"] else "")
                 + "no words to count tokens per word")
    else:
        ratio = f"{result['tokens_per_word']} tokens per word"
    text = (
        f"**{role}**: `{m['checkpoint']}` ({m['source']}) · {result['algorithm']} · vocabulary "
        f"{result['vocab_size']:,} · **{result['count']} tokens** ({result['special_count']} special"
        + (f", {fragments} byte pieces" if fragments else "") + f") · {ratio}"
    )
    if not result.get("byte_level"):
        text += " · " + NO_BYTES_NOTE.format(algorithm=result["algorithm"])
    if len(result["tokens"]) > SHOWN:
        text += (f" · the chips and the table show the first {SHOWN:,} of {len(result['tokens']):,} tokens "
                 "(the raw result below has them all)")
    return text


def _table(result: dict) -> dict:
    """The ids-and-offsets table; a tokenizer without byte-level pieces has no (empty) bytes column."""
    if result.get("byte_level"):
        rows = [[r["index"], r["token"], r["text"], r.get("bytes", ""), r["id"], f"{r['start']}-{r['end']}",
                 r["special"]] for r in result["tokens"][:SHOWN]]
        return gr.update(value={"data": rows, "headers": HEADERS}, column_widths=WIDTHS)
    rows = [[r["index"], r["token"], r["text"], r["id"], f"{r['start']}-{r['end']}", r["special"]]
            for r in result["tokens"][:SHOWN]]
    return gr.update(value={"data": rows, "headers": NO_BYTES_HEADERS}, column_widths=NO_BYTES_WIDTHS)


def _column(role: str, result: dict | None) -> tuple:
    """(summary, chips, table) of one tokenizer; a tokenizer that could not load says why."""
    if result is None or "error" in result:
        why = (result or {}).get("error", "not part of this result")
        return f"**{role}**: not available here ({why})", [], gr.update(value={"data": [], "headers": NO_BYTES_HEADERS})
    return _summary(role, result), _pieces(result, False), _table(result)


def run(text: str, special: bool = True):
    """/tokenize: each tokenizer's tokens, ids, offsets (and bytes for byte-level BPE)."""
    data = tokenize(text, add_special_tokens=as_bool("special", special))
    enc, dec = data["results"]["encoder"], data["results"]["decoder"]
    return (*_column("Encoder", enc), *_column("Decoder", dec),
            *_column("Multilingual", data["results"].get("multilingual")), data)


def redraw(data, show_bytes):
    """The chips again from the result already on the page: raw tokens or their decoded bytes
    (a display choice, so not an API parameter and no second tokenization)."""
    if not isinstance(data, dict) or "results" not in data:
        return gr.update(), gr.update(), gr.update()
    show = bool(show_bytes)
    ml = data["results"].get("multilingual") or {}
    return (_pieces(data["results"]["encoder"], show), _pieces(data["results"]["decoder"], show),
            _pieces(ml, show) if "tokens" in ml else [])


def _most_split(result: dict) -> tuple[str, int]:
    """(the word cut into the most pieces, how many): a word start and its continuation pieces."""
    best, run = ("", 0), []
    for r in result["tokens"]:
        if r["special"]:
            run = []
            continue
        run = run + [r] if r["continuation"] and run else [r]
        if len(run) > best[1]:
            best = ("".join(p["text"] for p in run).strip(), len(run))
    return best


def notice(data) -> str:
    """What to notice in this tokenization: the two counts, and the word cut into the most pieces."""
    if not isinstance(data, dict) or "results" not in data:
        return ""
    enc, dec = data["results"]["encoder"], data["results"]["decoder"]
    said = f"the same text is {enc['count']} tokens for the encoder and {dec['count']} for the decoder"
    word, pieces = _most_split(enc)
    lost = [u["text"] for u in enc.get("unknown") or []]
    if pieces > 1:
        said += (f"; the encoder cuts '{word}' into {pieces} pieces: a word missing from its vocabulary is "
                 "spelled with smaller pieces it has")
    else:
        said += "; the encoder has every word here in its vocabulary whole"
    if lost:
        shown = ", ".join(f"'{t}'" for t in dict.fromkeys(lost[:5]))
        said += (f"; but {shown} {'has' if len(lost) == 1 else 'have'} no piece in its vocabulary at all and "
                 f"became {enc.get('unknown_token') or '[UNK]'}: that part of the text is lost to the encoder "
                 "(the decoder's byte-level BPE can spell anything)")
    elif pieces > 1:
        said += ", never dropped"
    ml = data["results"].get("multilingual") or {}
    if "tokens" in ml:
        ml_lost = len(ml.get("unknown") or [])
        per_word = f" ({ml['tokens_per_word']} per word)" if ml.get("tokens_per_word") is not None else ""
        said += (f"; the multilingual SentencePiece makes {ml['count']} tokens{per_word} from a "
                 f"{ml['vocab_size']:,}-piece vocabulary shared by about 100 languages, ▁ marking each word start")
        said += f", with {ml_lost} unknown" if ml_lost else ", none of them unknown"
    return notice_line(said + ".")


def _chips(label: str, elem_id: str) -> gr.HighlightedText:
    # A long paragraph makes hundreds of chips: the row scrolls instead of growing without end.
    with gr.Row(max_height=340, elem_id=f"{elem_id}-box"):
        return gr.HighlightedText(label=label, color_map=COLORS, show_legend=True, show_inline_category=False,
                                  elem_id=elem_id)


def build() -> None:
    gr.Markdown(
        "Models read **tokens**, not characters. The encoder's WordPiece marks word pieces with `##`; "
        "the decoder's byte-level BPE marks a leading space with `Ġ`; the multilingual encoder's SentencePiece "
        "(XLM-R's vocabulary, chapter 4) marks a word start with `▁` and cuts German, French, Italian... with "
        "one vocabulary. Colours: blue starts a word, yellow "
        "continues one, red is a special token, purple is a piece of a character's bytes (legend above each list)."
    )
    gr.Markdown(BYTE_LEVEL_NOTE, elem_id="tok-byte-note")
    with gr.Row():
        text = Textbox(label="Text", value=EXAMPLES[0], lines=3, elem_id="tok-text", scale=4)
        with gr.Column(scale=1):
            special = Checkbox(label="Add special tokens", value=True)
            show_bytes = Checkbox(label="Show decoded bytes", value=False, elem_id="tok-bytes")
            go = gr.Button("Tokenize", variant="primary", elem_id="tok-go")
    gr.Examples(EXAMPLES, inputs=text)
    box = error_box(elem_id="tok-error")
    link_bar = links.bar("tokenizers", run=go)
    widths = WIDTHS
    with gr.Row():
        with gr.Column():
            enc_md = gr.Markdown(elem_id="tok-enc-summary")
            enc_hl = _chips("Encoder tokens", "tok-enc")
            enc_df = gr.Dataframe(headers=HEADERS, label="Encoder ids and offsets", max_height=300, wrap=True,
                                  column_widths=widths, elem_id="tok-enc-table")
        with gr.Column():
            dec_md = gr.Markdown(elem_id="tok-dec-summary")
            dec_hl = _chips("Decoder tokens", "tok-dec")
            dec_df = gr.Dataframe(headers=HEADERS, label="Decoder ids and offsets", max_height=300, wrap=True,
                                  column_widths=widths, elem_id="tok-dec-table")
        with gr.Column():
            ml_md = gr.Markdown(elem_id="tok-ml-summary")
            ml_hl = _chips("Multilingual tokens (SentencePiece)", "tok-ml")
            ml_df = gr.Dataframe(headers=HEADERS, label="Multilingual ids and offsets", max_height=300, wrap=True,
                                 column_widths=widths, elem_id="tok-ml-table")
    notice_md = gr.Markdown(elem_id="tok-notice", elem_classes=["tlab-notice-md"])
    out_json = raw_json("Raw result (JSON: what /tokenize returns)", elem_id="tok-json")
    code = code_view.view("tok")  # "The same in Python", under the raw result
    outputs = [enc_md, enc_hl, enc_df, dec_md, dec_hl, dec_df, ml_md, ml_hl, ml_df, out_json]
    chips = dict(fn=redraw, inputs=[out_json, show_bytes], outputs=[enc_hl, dec_hl, ml_hl], api_visibility="private")
    kept = runs.panel("tokenizers")
    events = declare(Endpoint(
        "tokenize", run, {"text": text, "special": special}, outputs, trigger=go, also=[text.submit], errors=box,
        notice=Notice(notice, [out_json], [notice_md]), result=out_json, code=code,
        link=Link("tokenizers", link_bar, run=go, results=[*outputs, notice_md]), runs=Runs(kept, [enc_md, dec_md, ml_md]), contract=CONTRACTS["tokenize"]))
    for ev in events:
        ev.success(**chips)  # keep the chips as the toggle says
    show_bytes.change(**chips)
