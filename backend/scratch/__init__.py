"""The From scratch tab: train a tokenizer (the book's chapter 10) and watch its merges; train a
tiny GPT on the same text and watch gibberish become words. The models themselves (the BPE, the tiny GPT, the
encoder-decoder, their loop and corpora) are model-level code in backend/engines/scratch/; this package plans,
streams, stores and downloads them."""

from backend.engines.scratch.corpora import MAX_CHARS  # the most characters of text a tokenizer or tiny GPT trains on
from backend.engines.scratch.run_settings import SHOWN_MERGES  # a trained tokenizer's first merges the tab lists
from backend.scratch.api import DEFAULT_SENTENCE, scratch_source, train_tokenizer
from backend.scratch.gpt_api import (DEFAULTS as GPT_DEFAULTS, LIMITS as GPT_LIMITS, drop_gpt_session, export_gpt,
                                     generate_gpt, plan_gpt, stop_gpt, train_gpt, train_gpt_iter)
from backend.scratch.replay import split_after
from backend.scratch.seq2seq_api import (DEFAULTS as SEQ2SEQ_DEFAULTS, LIMITS as SEQ2SEQ_LIMITS,
                                         drop_seq2seq_session, export_seq2seq, inspect_toy, plan_seq2seq,
                                         stop_seq2seq, toy_json, train_seq2seq, train_seq2seq_iter,
                                         translate_toy)

__all__ = ["DEFAULT_SENTENCE", "MAX_CHARS", "SHOWN_MERGES", "GPT_DEFAULTS", "GPT_LIMITS", "drop_gpt_session", "export_gpt",
           "generate_gpt", "plan_gpt", "scratch_source", "split_after", "stop_gpt", "train_gpt", "train_gpt_iter", "train_tokenizer",
           "SEQ2SEQ_DEFAULTS", "SEQ2SEQ_LIMITS", "drop_seq2seq_session", "export_seq2seq", "inspect_toy",
           "plan_seq2seq", "stop_seq2seq", "toy_json", "train_seq2seq", "train_seq2seq_iter", "translate_toy"]
