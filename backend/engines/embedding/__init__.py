"""Sentence embeddings: `vectors` pools and normalises an encoder's hidden states (what
sentence-transformers does), and `batching` lets short requests arriving together share one forward.
"""
