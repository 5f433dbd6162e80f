"""One lock per fast tokenizer: any code that calls one tokenizer from several threads relies on it.

A fast tokenizer sets padding and truncation on its shared Rust object, then encodes; two
threads calling one tokenizer at once (the batch lane beside a build) can swap settings between
the two steps. The hub installs the lock once, before it loads any tokenizer.
"""

from __future__ import annotations

import threading
import weakref

_REGISTRY = threading.Lock()
_TOKENIZER_LOCKS: dict[int, threading.RLock] = {}  # by id: a lock in the tokenizer would break copy / pickle


def _lock_of(tokenizer) -> threading.RLock:
    key = id(tokenizer)
    lock = _TOKENIZER_LOCKS.get(key)
    if lock is None:
        with _REGISTRY:
            lock = _TOKENIZER_LOCKS.get(key)
            if lock is None:
                lock = _TOKENIZER_LOCKS[key] = threading.RLock()
                weakref.finalize(tokenizer, _TOKENIZER_LOCKS.pop, key, None)
    return lock


def thread_safe_tokenizers() -> None:
    """Serialise each fast tokenizer's encode calls (idempotent).

    A fast tokenizer sets padding and truncation on its shared Rust object, then encodes: two
    threads calling one tokenizer at once (the batch lane runs up to TLAB_BATCH_MAX handlers,
    beside a build) can swap settings between the two steps and fail ("Unable to create
    tensor ..."). One lock per tokenizer instance around `_encode_plus`, the step every
    `__call__` / `encode` goes through, makes that pair atomic; encoding is short, so the lock
    costs little."""
    from transformers.tokenization_utils_tokenizers import TokenizersBackend

    original = TokenizersBackend._encode_plus
    if getattr(original, "_tlab_locked", False):
        return

    def _encode_plus(self, *args, **kwargs):
        with _lock_of(self):
            return original(self, *args, **kwargs)

    _encode_plus._tlab_locked = True
    TokenizersBackend._encode_plus = _encode_plus
