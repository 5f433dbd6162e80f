"""Model-level code: handed a model and its tokenizer, never asks the hub.

One sub-package per job: `generation` (decoding with its taps), `attention` (the attention
weights, the from-scratch maths, the per-architecture adapters), `tasks` (the Pipelines tasks'
shared helpers and the instruct fallback), `qa`, `ner`, `classify`, `compression` (chapter 8),
`embedding` (sentence vectors and batched requests), and `server` (the generation server's
clients). Session state (`sessions`, `client_store`) and the build-once cache (`once`) live on
the runtime floor below.
"""
