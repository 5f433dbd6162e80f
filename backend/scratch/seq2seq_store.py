"""The tiny encoder-decoders trained in the From scratch tab, one per session: the tiny GPT's store
(backend/scratch/gpt_store.py: idle eviction, a session cap, a memory budget, a stop flag and a
private download folder per session) under its own name, in its own process-wide instance, so a
session can hold a tiny GPT and a tiny encoder-decoder at once."""

from __future__ import annotations

from backend.runtime.singleton import ProcessWide
from backend.runtime import config
from backend.scratch.gpt_store import GptStore, Model

__all__ = ["Model", "Seq2SeqStore", "STORE", "get_store"]


class Seq2SeqStore(GptStore):
    NOUN = "tiny encoder-decoder"
    TRAIN_HINT = "Train the encoder-decoder, or /train_seq2seq with the same client"


STORE = ProcessWide(lambda: Seq2SeqStore(**config.store_settings()))


def get_store() -> Seq2SeqStore:
    return STORE.get()
