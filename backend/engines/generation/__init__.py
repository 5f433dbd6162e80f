"""Generation with taps: every step's candidates, beams and their pruning, recorded as plain data.

`generate` runs `model.generate` with a recorder (`record`), builds the result (`result`, `beam_tree`),
with the sampling filters written out (`filters`); `settings` is the one validator of decoding
settings (the Decoding and Pipelines tabs share it) and `presets` the named examples.
"""
