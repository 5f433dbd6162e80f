"""Attention as the model computes it and as we recompute it from the weights.

`extract` runs a model with its attention weights kept; `math` is the from-scratch scaled
dot-product attention a learner reads; `encodings` the positional encodings (sinusoidal, rotary).
"""
