"""Per-session state with bounded memory, shared fairly: the one store behind search indexes,
trained models and the hub's visitor-chosen models.

A session is one visitor (Gradio's session hash). An entry *holds an item* when `size_of` says
it costs memory (a private index, a trained model); a session with nothing costly (a shared
built-in index, no model yet) is cheap to drop and cheap to make again.

`evict` drops, in order:
1. entries idle longer than `idle_s`;
2. beyond `max_entries`: cheap entries first (least recently used), then items;
3. while the items' total `size_of` is over `max_bytes`: items, the longest idle first (the
   largest first among equals), shrunk by `shrink` or dropped.
It never touches the entry being served (`keep`), a busy one (a training run), nor, for steps
2 and 3, an item used within the last `keep_s` seconds. That is the promise to a visitor: any
number of newcomers cannot take an item used in the last `keep_s`; when the room is full of
such items, a newcomer's item does not fit (`room_for` says so before the work starts, and
the caller refuses it with a readable message) instead of flushing someone else's.

Why an item went (idle, room) is remembered per session (`why_gone`, bounded), so a visitor
whose item was evicted is told that, not "no item yet". `release` frees what an entry holds
outside memory (its temp files) when it goes.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from typing import Callable, Generic, Hashable, Iterator, TypeVar

from cachetools import FIFOCache

V = TypeVar("V")
GONE_IDLE, GONE_ROOM = "idle", "room"
MAX_TOMBSTONES = 4096  # sessions told why their item went (a few dozen bytes each)


def _nothing(_value) -> None:
    return None


class SessionStore(Generic[V]):
    def __init__(self, new: Callable[[], V], *, idle_s: float = 3600.0, max_entries: int = 64,
                 max_bytes: int | None = None, size_of: Callable[[V], int] = lambda v: 0,
                 busy: Callable[[V], bool] = lambda v: False, release: Callable[[V], None] = _nothing,
                 shrink: Callable[[V], bool] | None = None, keep_s: float = 0.0,
                 describe: Callable[[V], str] = lambda v: ""):
        self._new = new
        self.idle_s = idle_s if idle_s and idle_s > 0 else math.inf
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.keep_s = max(0.0, float(keep_s or 0.0))
        self._size_of, self._busy, self._release, self._shrink = size_of, busy, release, shrink
        self._describe = describe
        self._entries: OrderedDict[Hashable, tuple[V, float]] = OrderedDict()  # least recently used first
        # key -> (reason, what it held); the least recently written goes first beyond MAX_TOMBSTONES
        self._gone: FIFOCache = FIFOCache(MAX_TOMBSTONES)
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

    def wait_idle(self, key: Hashable, wait_s: float, poll_s: float = 0.05) -> bool:
        """Wait up to `wait_s` until `key`'s entry is gone or not busy (its run has ended) -> is it?"""
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            value = self.peek(key)
            if value is None or not self._busy(value):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll_s)

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
        """Forget a session (its page closed): no tombstone, nobody is left to tell."""
        with self.lock:
            found = self._entries.pop(key, None)
            self._gone.pop(key, None)
        if found is None:
            return None
        self._release(found[0])
        return found[0]

    def total_bytes(self) -> int:
        with self.lock:
            return sum(self._size_of(v) for v, _ in self._entries.values())

    def items_count(self) -> int:
        """Entries that hold an item (cost memory)."""
        with self.lock:
            return sum(1 for v, _ in self._entries.values() if self._size_of(v) > 0)

    # ------------------------------------------------------------------ eviction
    def _evictable(self, keep: Hashable | None, now: float, items: bool) -> list[Hashable]:
        """Cheap entries (items=False, least recently used first) or unprotected items (items=True,
        the longest idle first, the largest first among equals)."""
        found = []
        for k, (v, used) in self._entries.items():
            if k == keep or self._busy(v) or (self._size_of(v) > 0) != items:
                continue
            if items and now - used < self.keep_s:
                continue
            found.append((used, -self._size_of(v), k))
        return [k for _, _, k in sorted(found, key=lambda t: (t[0], t[1]))]

    def _remove(self, key: Hashable, reason: str, gone: list[Hashable]) -> None:
        value = self._entries.pop(key)[0]
        if self._size_of(value) > 0:
            self._bury(key, reason, value)
        self._release(value)
        gone.append(key)

    def _bury(self, key: Hashable, reason: str, value: V) -> None:
        self._gone[key] = (reason, self._describe(value))

    def _free_bytes(self, keep: Hashable | None, now: float, pending: int, gone: list[Hashable]) -> None:
        for key in self._evictable(keep, now, items=True):
            if self.total_bytes() + pending <= self.max_bytes:
                return
            value = self._entries[key][0]
            if self._shrink is not None:
                self._bury(key, GONE_ROOM, value)
                if self._shrink(value):
                    gone.append(key)
            else:
                self._remove(key, GONE_ROOM, gone)

    def evict(self, keep: Hashable | None = None, now: float | None = None, pending: int = 0) -> list[Hashable]:
        """Idle entries; then cheap entries, then unprotected items, beyond max_entries; then
        unprotected items while the bytes (+ `pending`, about to be added) are over max_bytes."""
        now = time.monotonic() if now is None else now
        gone: list[Hashable] = []
        with self.lock:
            for key in [k for k, (v, used) in self._entries.items()
                        if k != keep and not self._busy(v) and now - used > self.idle_s]:
                self._remove(key, GONE_IDLE, gone)
            for items in (False, True):
                for key in self._evictable(keep, now, items):
                    if len(self._entries) <= self.max_entries:
                        break
                    self._remove(key, GONE_ROOM, gone)
            if self.max_bytes is not None:
                self._free_bytes(keep, now, pending, gone)
        return gone

    def room_for(self, key: Hashable, nbytes: int, now: float | None = None) -> bool:
        """Make room for `key` to hold an item of `nbytes` (replacing what it holds now), evicting
        only what `evict` may; False when it still does not fit (the room is full of items used
        in the last keep_s): the caller refuses the newcomer instead of flushing anyone."""
        with self.lock:
            found = self._entries.get(key)
            pending = max(0, int(nbytes) - (self._size_of(found[0]) if found is not None else 0))
            self.evict(keep=key, now=now, pending=pending)
            if self.max_bytes is not None and self.total_bytes() + pending > self.max_bytes:
                return False
            others = sum(1 for k, (v, _) in self._entries.items() if k != key and self._size_of(v) > 0)
            return nbytes <= 0 or others + 1 <= self.max_entries

    def could_fit(self, key: Hashable, nbytes: int, now: float | None = None) -> bool:
        """Could `key` get an item of `nbytes` (evicting only what `evict` may)? Evicts nothing:
        asked before a long job whose item exists only at its end (a training run)."""
        now = time.monotonic() if now is None else now
        with self.lock:
            kept = [v for k, (v, used) in self._entries.items() if k != key and self._size_of(v) > 0
                    and (self._busy(v) or now - used < self.keep_s)]
            fits_bytes = self.max_bytes is None or sum(map(self._size_of, kept)) + nbytes <= self.max_bytes
            return fits_bytes and len(kept) + 1 <= self.max_entries

    def why_gone(self, key: Hashable) -> tuple[str, str] | None:
        """(reason, what it held) when this session's item was evicted (GONE_IDLE or GONE_ROOM)."""
        with self.lock:
            return self._gone.get(key)

    def forget_gone(self, key: Hashable) -> None:
        """The session holds a new item: what happened to the old one no longer matters."""
        with self.lock:
            self._gone.pop(key, None)

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
            self._gone.clear()
        for value, _ in entries:
            self._release(value)
