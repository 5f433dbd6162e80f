"""Values built at most once per key, safely under concurrency: the one "build once" cache.

Two callers asking for the same key build it once (a per-key lock); different keys build in
parallel; a build that raises caches nothing, so the next call retries. The hub's weights and
tokenizers, the int8 copies and the shared search indexes are all kept this way.
"""

from __future__ import annotations

import threading
import math
from typing import Callable, Generic, Hashable, TypeVar

from cachetools import FIFOCache

V = TypeVar("V")


class _Values(FIFOCache):
    """The built values, first built first dropped beyond the bound; a dropped key's lock goes with it."""

    def __init__(self, maxsize: float, dropped: Callable[[Hashable], None]):
        super().__init__(maxsize)
        self._dropped = dropped

    def popitem(self):
        key, value = super().popitem()
        self._dropped(key)
        return key, value


class BuildOnce(Generic[V]):
    """key -> value, built once by the first caller; oldest dropped beyond `max_entries`."""

    def __init__(self, max_entries: int | None = None):
        self.max_entries = max_entries
        self._locks: dict[Hashable, threading.Lock] = {}
        self._values = _Values(math.inf if max_entries is None else max_entries, lambda key: self._locks.pop(key, None))
        self._guard = threading.Lock()
        self.builds = 0  # how many values were actually built (tests and benches read it)

    def get(self, key: Hashable, build: Callable[[], V]) -> tuple[V, bool]:
        """(value, built_now): the cached value of `key`, or `build()` run once and kept."""
        with self._guard:
            if key in self._values:
                return self._values[key], False
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._values:
                    return self._values[key], False
            value = build()
            with self._guard:
                self._values[key] = value  # drops the oldest beyond max_entries
                self.builds += 1
            return value, True

    def peek(self, key: Hashable) -> V | None:
        with self._guard:
            return self._values.get(key)

    def pop(self, key: Hashable) -> V | None:
        with self._guard:
            self._locks.pop(key, None)
            return self._values.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        with self._guard:
            return key in self._values

    def __len__(self) -> int:
        with self._guard:
            return len(self._values)

    def clear(self) -> None:
        with self._guard:
            self._values.clear()
            self._locks.clear()
