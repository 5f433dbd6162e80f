"""The From scratch tab: train a tokenizer (the book's chapter 10) and watch its merges; train a
tiny GPT on the same text and watch gibberish become words."""

from backend.scratch.api import DEFAULT_SENTENCE, scratch_source, train_tokenizer
from backend.scratch.gpt_api import (DEFAULTS as GPT_DEFAULTS, LIMITS as GPT_LIMITS, drop_gpt_session, export_gpt,
                                     generate_gpt, plan_gpt, stop_gpt, train_gpt, train_gpt_iter)
from backend.scratch.replay import split_after

__all__ = ["DEFAULT_SENTENCE", "GPT_DEFAULTS", "GPT_LIMITS", "drop_gpt_session", "export_gpt", "generate_gpt",
           "plan_gpt", "scratch_source", "split_after", "stop_gpt", "train_gpt", "train_gpt_iter", "train_tokenizer"]
