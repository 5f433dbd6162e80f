"""The Tokenizers tab: a text under the app's tokenizers (tokens, ids, offsets, bytes)."""

from backend.tokenizers.api import explore, tokenize

__all__ = ["explore", "tokenize"]
