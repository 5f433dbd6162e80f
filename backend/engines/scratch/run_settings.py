"""The From scratch runs' settings where a request leaves one out, how often a run reports and how much of a
trained tokenizer the tab shows: shared by the
endpoints (backend/scratch) and the snippets that write the same run out (backend/snippets/scratch.py).

Kept apart from tiny_gpt.py and loop.py, whose source is part of the scaling family's build key."""

from __future__ import annotations

GPT_DEFAULTS = dict(steps=300, layers=3, heads=4, width=96, context=64, batch=16, learning_rate=2e-3, eval_every=50,
                    temperature=0.8, seed=0, vocab_size=1000)
SEQ2SEQ_DEFAULTS = dict(steps=400, layers=2, heads=4, width=64, batch=64, learning_rate=3e-3, eval_every=50, seed=0)
SEQ2SEQ_FFN_SCALE = 2  # the encoder-decoder's feed-forward width, in widths
SHOWN_MERGES = 50  # a trained tokenizer's first merges (or pieces) the tab lists


def report_every(steps: int) -> int:
    """Steps between two loss reports for a run of `steps`: about 30 reports, 1 to 10 steps apart."""
    return max(1, min(10, steps // 30))
