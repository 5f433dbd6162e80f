"""The models trained from scratch, as a learner reads them (chapters 3, 10 and 11): `bpe` (byte-pair encoding by
hand), `train` (a tokenizer trained with the `tokenizers` library, checked against `bpe`), `tiny_gpt` (a tiny
GPT-2), `seq2seq` (a tiny encoder-decoder) and `seq2seq_data` (its toy date translation), `loop` (the one training
loop they share), `corpora` (the shipped text they train on) and `sparse_attention` (sparse and linear attention
written out).

They are model-level code: handed text, settings and a stop flag, they build, train and read models, never ask
the hub and keep no session, so they live here, below the From scratch tab (backend/scratch/, which plans, streams,
stores and downloads them) and where the snippets' scripts import them from without importing a tab. Each module
is imported by name (`from backend.engines.scratch import tiny_gpt`); this package imports nothing itself.
"""
