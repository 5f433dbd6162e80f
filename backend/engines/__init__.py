"""Model-level code: handed a model and its tokenizer, never asks the hub.

generation (decoding with its taps), embedding and batching, similarity classification, int8
quantization, extractive QA, instruct prompts, the from-scratch attention maths, fine-tuning
loops and the shipped labelled data; `sessions` (the one per-session store with bounded memory)
and `once` (the one build-once cache) serve every layer above.
"""
