"""The From scratch tab: train a tokenizer (the book's chapter 10) and watch its merges."""

from backend.scratch.api import DEFAULT_SENTENCE, scratch_source, train_tokenizer
from backend.scratch.replay import split_after

__all__ = ["DEFAULT_SENTENCE", "scratch_source", "split_after", "train_tokenizer"]
