"""Stop flags that reach inside a model call, so that every training stops within 5 s.

A training loop's Stop is a `threading.Event` in the app's process, checked between the chunks it
hands to GPU tasks. A chunk that scores a whole validation or test split (or runs many steps) would
run on for seconds after a Stop, so the chunk checks the flag itself, before each batch. An Event
cannot cross into a GPU task's arguments (ZeroGPU pickles them, and a lock does not pickle), so the
loop names its flag here and hands the chunk the name: in this process the name finds the flag (and
the request's cancel); in a ZeroGPU worker it finds nothing and the chunk runs to its end, as before.

    with stops.named(stop) as key:          # the loop, in the app's process
        worker.forward_chunk(weights, texts, n, stop_key=key)
    ...
    if stops.asked(stop_key):                # the chunk, before each batch
        return None
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator

from backend.runtime import budget as request_budget

_FLAGS: dict[str, tuple[threading.Event | None, object]] = {}
_LOCK = threading.Lock()


@contextlib.contextmanager
def named(stop: threading.Event | None) -> Iterator[str]:
    """A name for `stop` (and for the current request's cancel) while the block runs."""
    key = uuid.uuid4().hex
    with _LOCK:
        _FLAGS[key] = (stop, request_budget.current())
    try:
        yield key
    finally:
        with _LOCK:
            _FLAGS.pop(key, None)


def asked(key: str | None) -> bool:
    """Has the flag named `key` been set, or its request cancelled? (False for no name or an unknown one.)"""
    if not key:
        return False
    with _LOCK:
        stop, outer = _FLAGS.get(key, (None, None))
    return bool((stop is not None and stop.is_set()) or getattr(outer, "cancelled", False))
