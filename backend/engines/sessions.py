"""Per-session state with bounded memory: the one store behind search indexes, trained models
and the hub's visitor-chosen models.

Each entry has a last-used time. `evict` drops, in order: entries idle longer than `idle_s`;
the least recently used beyond `max_entries`; then, while the entries' total `size_of` is over
`max_bytes`, it shrinks (or drops) the least recently used. It never touches the entry being
served (`keep`) or a busy one (a training run in progress). `release` frees what an entry holds
outside memory (its temp files) when it goes.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from typing import Callable, Generic, Hashable, Iterator, TypeVar

V = TypeVar("V")


def _nothing(_value) -> None:
    return None


class SessionStore(Generic[V]):
    def __init__(self, new: Callable[[], V], *, idle_s: float = 3600.0, max_entries: int = 64,
                 max_bytes: int | None = None, size_of: Callable[[V], int] = lambda v: 0,
                 busy: Callable[[V], bool] = lambda v: False, release: Callable[[V], None] = _nothing,
                 shrink: Callable[[V], bool] | None = None):
        self._new = new
        self.idle_s = idle_s if idle_s and idle_s > 0 else math.inf
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size_of, self._busy, self._release, self._shrink = size_of, busy, release, shrink
        self._entries: OrderedDict[Hashable, tuple[V, float]] = OrderedDict()  # least recently used first
        self.lock = threading.RLock()

    def get(self, key: Hashable, create: bool = True) -> V | None:
        """The entry of `key` (made when missing and `create`), marked used; then evicts others."""
        with self.lock:
            found = self._entries.get(key)
            if found is None:
                if not create:
                    return None
                value = self._new()
            else:
                value = found[0]
            self._entries[key] = (value, time.monotonic())
            self._entries.move_to_end(key)
            self.evict(keep=key)
            return value

    def peek(self, key: Hashable) -> V | None:
        """The entry if it exists: never creates, never marks used, never evicts."""
        with self.lock:
            found = self._entries.get(key)
            return None if found is None else found[0]

    def touch(self, key: Hashable) -> None:
        with self.lock:
            if key in self._entries:
                self._entries[key] = (self._entries[key][0], time.monotonic())
                self._entries.move_to_end(key)

    def put(self, key: Hashable, value: V) -> None:
        with self.lock:
            old = self._entries.get(key)
            if old is not None and old[0] is not value:
                self._release(old[0])
            self._entries[key] = (value, time.monotonic())
            self._entries.move_to_end(key)
            self.evict(keep=key)

    def drop(self, key: Hashable) -> V | None:
        with self.lock:
            found = self._entries.pop(key, None)
        if found is None:
            return None
        self._release(found[0])
        return found[0]

    def total_bytes(self) -> int:
        with self.lock:
            return sum(self._size_of(v) for v, _ in self._entries.values())

    def evict(self, keep: Hashable | None = None, now: float | None = None) -> list[Hashable]:
        """Idle entries, then the oldest beyond max_entries, then the LRU while over max_bytes."""
        now = time.monotonic() if now is None else now
        gone: list[Hashable] = []
        with self.lock:
            def candidates():
                return [k for k, (v, _) in self._entries.items() if k != keep and not self._busy(v)]

            for key in candidates():
                if now - self._entries[key][1] > self.idle_s:
                    gone.append(key)
            for key in gone:
                self._release(self._entries.pop(key)[0])
            for key in candidates():
                if len(self._entries) <= self.max_entries:
                    break
                gone.append(key)
                self._release(self._entries.pop(key)[0])
            if self.max_bytes is not None:
                for key in candidates():
                    if self.total_bytes() <= self.max_bytes:
                        break
                    value = self._entries[key][0]
                    if self._shrink is not None:
                        if self._shrink(value):
                            gone.append(key)
                    else:
                        gone.append(key)
                        self._release(self._entries.pop(key)[0])
        return gone

    def __contains__(self, key: Hashable) -> bool:
        with self.lock:
            return key in self._entries

    def __len__(self) -> int:
        with self.lock:
            return len(self._entries)

    def values(self) -> Iterator[V]:
        with self.lock:
            return iter([v for v, _ in self._entries.values()])

    def keys(self) -> list[Hashable]:
        with self.lock:
            return list(self._entries)

    def clear(self) -> None:
        with self.lock:
            entries = list(self._entries.values())
            self._entries.clear()
        for value, _ in entries:
            self._release(value)
