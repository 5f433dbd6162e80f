"""The tokenizer explorer: how WordPiece (encoder), BPE (decoder) and SentencePiece (the
multilingual encoder, chapter 4: XLM-R's unigram vocabulary, `▁` marks a word start) cut the same text.

The book's chapters 2 and 4 show subword splits, special tokens and ids; this returns them
with each token's character span, so the tab can colour the original text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from backend.runtime.errors import LabError
from backend.runtime.validation import check_text as _check

EXPLORER_ROLES = ("encoder", "decoder", "multilingual")
OPTIONAL_ROLES = ("multilingual",)  # a missing package fails only its own column


@lru_cache(maxsize=1)
def _unicode_to_byte() -> dict[str, int]:
    """Byte-level BPE's printable alphabet, reversed: GPT-2 shows each of the 256 byte values as
    one visible character (printable Latin-1 as itself, the rest shifted to U+0100...: a space
    is 'Ġ', a newline 'Ċ'), so a token's characters spell its bytes."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def token_bytes(token: str) -> bytes | None:
    """The bytes a byte-level BPE token stands for (None if it is not spelled in that alphabet)."""
    table = _unicode_to_byte()
    if not token or any(c not in table for c in token):
        return None
    return bytes(table[c] for c in token)


def decoded_piece(raw: bytes) -> tuple[str, bool]:
    """(what the bytes read as, whether they are whole characters). A piece of a character
    (the first 2 of the emoji's 4 bytes) shows as its hex bytes, e.g. '[F0 9F]'."""
    text = raw.decode("utf-8", errors="surrogateescape")  # a stray byte b -> U+DC00 + b
    if not _ESCAPED.search(text):
        return text, True
    return _ESCAPED.sub(lambda m: "[" + " ".join(f"{ord(c) - 0xDC00:02X}" for c in m.group(0)) + "]", text), False


_ESCAPED = re.compile("[\udc80-\udcff]+")


def check_text(text) -> str:
    """Empty text is allowed here: it shows what the special tokens alone look like."""
    return _check(text, "tokenize")


def explore(text: str, tokenizer, add_special_tokens: bool = True) -> dict:
    """Tokens, ids, character offsets and special-token flags for one tokenizer."""
    text = check_text(text)
    enc = tokenizer(text, add_special_tokens=add_special_tokens, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    offsets = [tuple(o) for o in enc["offset_mapping"]]
    special_ids = set(tokenizer.all_special_ids)
    tokens = tokenizer.convert_ids_to_tokens(ids)
    byte_level = is_byte_level(tokenizer)
    rows = []
    for i, (tok, tid, (start, end)) in enumerate(zip(tokens, ids, offsets)):
        special = tid in special_ids
        rows.append(
            {
                "index": i,
                "token": tok,
                "id": int(tid),
                "start": int(start),
                "end": int(end),
                "text": "" if special else text[start:end],
                "special": special,
                # WordPiece marks word-continuations with "##"; byte-level BPE marks word starts
                # with "Ġ" (a leading space), so a piece is a continuation if it lacks one.
                "continuation": (not special) and _is_continuation(tok, text, start),
            }
        )
        if byte_level and not special:
            raw = token_bytes(tok)
            if raw is not None:
                rows[-1]["bytes"] = raw.hex(" ").upper()
                rows[-1]["decoded"], complete = decoded_piece(raw)
                rows[-1]["byte_fragment"] = not complete
    words = len(text.split())
    unk = getattr(tokenizer, "unk_token_id", None)
    # text the vocabulary could not spell even with pieces: it became the unknown token ([UNK]),
    # so that part of the text is lost to the model (WordPiece does this; byte-level BPE never)
    unknown = [{"index": r["index"], "text": text[r["start"]:r["end"]]} for r in rows
               if unk is not None and r["id"] == unk]
    return {
        "tokenizer": type(tokenizer).__name__,
        "unknown_token": tokenizer.unk_token if unk is not None else None,
        "unknown": unknown,
        "algorithm": _algorithm(tokenizer),
        "byte_level": byte_level,
        "vocab_size": int(len(tokenizer)),
        "count": len(ids),
        "special_count": sum(r["special"] for r in rows),
        "words": words,
        # No words (an empty or blank text): no ratio to show, rather than a made-up 0.0.
        "tokens_per_word": round(len([r for r in rows if not r["special"]]) / words, 3) if words else None,
        "empty": words == 0,
        # Byte-level BPE has a "bytes" per piece; WordPiece works on characters, so it has none.
        "columns": ["index", "token", "text"] + (["bytes"] if byte_level else []) + ["id", "start", "end", "special"],
        "tokens": rows,
        "ids": [int(i) for i in ids],
        "decoded": tokenizer.decode(ids),
    }


def _is_continuation(token: str, text: str, start: int) -> bool:
    if token.startswith("##"):
        return True
    if start == 0:
        return False
    return not text[start - 1].isspace() and not token.startswith(("Ġ", "▁")) and text[start - 1].isalnum() and text[start].isalnum()


def is_byte_level(tokenizer) -> bool:
    """Does this tokenizer cut UTF-8 bytes (GPT-2, llama 3, SmolLM2) rather than characters?"""
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    return type(decoder).__name__ == "ByteLevel"


def _algorithm(tokenizer) -> str:
    model = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    name = type(model).__name__ if model is not None else ""
    return {"WordPiece": "WordPiece", "BPE": "BPE (byte-level)",
            "Unigram": "SentencePiece (unigram)"}.get(name, name or "unknown")


def tokenize(text: str, roles=EXPLORER_ROLES, add_special_tokens: bool = True) -> dict:
    """The explorer for each role's tokenizer, side by side, with which checkpoint each is."""
    from backend.hub import get_hub

    text = check_text(text)
    hub = get_hub()
    out = {"text": text, "results": {}}
    for role in roles:
        try:
            tokenizer, resolved = hub.tokenizer(role)
        except LabError as exc:
            if role not in OPTIONAL_ROLES:
                raise
            out["results"][role] = {"error": str(exc), "model": {"role": role}}
            continue
        result = explore(text, tokenizer, add_special_tokens)
        result["model"] = {"role": role, "checkpoint": resolved.checkpoint, "source": resolved.source, "method": resolved.method}
        out["results"][role] = result
    return out
