"""The tokenizer explorer's contract (backend/runtime/contract.py): a text under TLAB_MAX_TOKENIZE_CHARS,
read by each tokenizer once (milliseconds for the longest)."""

from __future__ import annotations

from backend.runtime.contract import Contract, Cost, Flag, Text

CONTRACTS = {"tokenize": Contract({"text": Text("tokenize"), "special": Flag()},
                                  Cost(mb=128, s=2.0, what="tokenizing this text"))}
