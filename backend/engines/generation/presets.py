"""The book's chapter 5 experiments as ready-made (prompt, settings) pairs."""

from __future__ import annotations

UNICORN = (
    "In a shocking finding, scientist discovered a herd of unicorns living in a remote, previously unexplored "
    "valley, in the Andes Mountains. Even more surprising to the researchers was the fact that the unicorns "
    "spoke perfect English.\n\n"
)

PRESETS: dict[str, dict] = {
    "Transformers are the… (greedy, 8 steps)": {"prompt": "Transformers are the", "settings": {"strategy": "greedy", "max_new_tokens": 8}},
    "Unicorns: greedy": {"prompt": UNICORN, "settings": {"strategy": "greedy", "max_new_tokens": 128}},
    "Unicorns: beam 5": {"prompt": UNICORN, "settings": {"strategy": "beam", "num_beams": 5, "max_new_tokens": 128}},
    "Unicorns: beam 5, no-repeat 2": {"prompt": UNICORN, "settings": {"strategy": "beam", "num_beams": 5, "no_repeat_ngram_size": 2, "max_new_tokens": 128}},
    "Unicorns: temperature 2.0": {"prompt": UNICORN, "settings": {"strategy": "sample", "temperature": 2.0, "top_k": 0, "max_new_tokens": 128, "seed": 42}},
    "Unicorns: temperature 0.5": {"prompt": UNICORN, "settings": {"strategy": "sample", "temperature": 0.5, "top_k": 0, "max_new_tokens": 128, "seed": 42}},
    "Unicorns: top-k 50": {"prompt": UNICORN, "settings": {"strategy": "sample", "top_k": 50, "max_new_tokens": 128, "seed": 42}},
    "Unicorns: top-p 0.90": {"prompt": UNICORN, "settings": {"strategy": "sample", "top_p": 0.90, "max_new_tokens": 128, "seed": 42}},
}

# Strategies compare mode offers by default (the book's comparison on the unicorn prompt).
COMPARE_DEFAULT: list[dict] = [
    {"strategy": "greedy", "max_new_tokens": 64},
    {"strategy": "beam", "num_beams": 4, "no_repeat_ngram_size": 2, "max_new_tokens": 64},
    {"strategy": "sample", "top_p": 0.9, "max_new_tokens": 64, "seed": 42},
]
