"""The Tokenizers tab's snippet: each role's `AutoTokenizer`, the same text, ids and offsets."""

from __future__ import annotations

from backend.snippets.checkpoint import tokenizer_only
from backend.snippets.text import literal, script


def tokenize(inputs: dict, result: dict) -> str:
    special = inputs.get("special", True)
    special = special if isinstance(special, bool) else str(special).lower() not in ("false", "0", "no")
    opt = "" if special else ", add_special_tokens=False"
    imports, blocks = [], [[f"text = {literal(result.get('text', inputs.get('text', '')))}"]]
    for role, r in (result.get("results") or {}).items():
        if "error" in r:
            continue
        var = f"tok_{role}"
        load = tokenizer_only(r.get("model") or {}, var)
        imports += load.imports
        blocks.append(load.lines + [f"enc = {var}(text{opt}, return_offsets_mapping=True)",
                                    f"ids_{role} = enc.input_ids",
                                    f"print({role!r}, {var}.convert_ids_to_tokens(enc.input_ids), enc.input_ids, "
                                    "enc.offset_mapping)"])
    blocks.append(["# What the app adds: each token's text and bytes (byte-level BPE) drawn as chips."])
    return script(imports, *blocks)
