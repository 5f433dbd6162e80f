"""Token classification (named entities): the model trained here, its data, scores and transfer.

`token_classification` trains and runs an encoder with a token head on word-aligned labels from
`data`; `serving` gives that model the face transformers' pipeline expects; `metrics` scores
entities as seqeval does; `languages` and `transfer` are the multilingual sets and the
cross-lingual transfer table (train on one language, test on the others).
"""
