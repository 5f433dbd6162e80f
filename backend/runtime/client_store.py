"""The session store, shared per client rather than per session, with reservations that age out.
A `SessionStore` (backend/runtime/sessions.py) keyed by session, plus:

- **Shares per client.** A client (an address: backend/runtime/clients.py) holds at most `share`
  of the store's memory and of its places, whatever number of sessions it opens: the sessions of
  one client share one share. `client_refusal` is asked before a new item is made; it first lets
  the client's own unreserved items go, and then says which share is full and when it frees up.
- **Reservations that expire by age.** An item used in the last `keep_s` is never evicted for
  others, but only until `max_age_s` after it was made: calling a model once every few minutes no
  longer holds it for ever (default 3 x keep_s).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Hashable

from backend.runtime.sessions import GONE_ROOM, SessionStore, V
from backend.runtime import clients


def _minutes(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{max(1, math.ceil(seconds)):.0f} s"
    return f"{math.ceil(seconds / 60):.0f} minutes"


class ClientStore(SessionStore[V]):
    def __init__(self, new: Callable[[], V], *, share: float = 0.25, max_age_s: float | None = None,
                 client_of: Callable[[Hashable], str] = clients.client_of, **kwargs):
        super().__init__(new, **kwargs)
        self.share = min(1.0, max(0.0, float(share)))
        self.max_age_s = 3 * self.keep_s if max_age_s is None else max(0.0, float(max_age_s))
        self._client_of = client_of
        self._born: dict[Hashable, float] = {}  # key -> when its current item was first seen

    # ------------------------------------------------------------------ ages
    def renew(self, key: Hashable, now: float | None = None) -> None:
        """`key` holds a new item (a new model, a new index): its age starts now."""
        with self.lock:
            self._born[key] = time.monotonic() if now is None else now

    def _note_births(self, now: float) -> None:
        for k, (v, _) in list(self._entries.items()):
            if self._size_of(v) > 0 or self._busy(v):
                self._born.setdefault(k, now)
            else:
                self._born.pop(k, None)
        for k in [k for k in self._born if k not in self._entries]:
            del self._born[k]

    def born(self, key: Hashable) -> float | None:
        with self.lock:
            return self._born.get(key)

    def _reserved(self, key: Hashable, value: V, used: float, now: float) -> bool:
        """Is this item protected from others now: busy, or used in the last keep_s and younger than max_age_s?"""
        if self._busy(value):
            return True
        young = now - self._born.get(key, now) < self.max_age_s
        return now - used < self.keep_s and young

    def frees_at(self, key: Hashable, now: float | None = None) -> float | None:
        """When `key`'s reservation ends (monotonic seconds), None while busy (a run: when it ends)."""
        now = time.monotonic() if now is None else now
        with self.lock:
            found = self._entries.get(key)
            if found is None:
                return now
            value, used = found
            if self._busy(value):
                return None
            return min(used + self.keep_s, self._born.get(key, now) + self.max_age_s)

    # ------------------------------------------------------------------ eviction (SessionStore's, aged)
    def _evictable(self, keep: Hashable | None, now: float, items: bool) -> list[Hashable]:
        found = []
        for k, (v, used) in self._entries.items():
            if k == keep or self._busy(v) or (self._size_of(v) > 0) != items:
                continue
            if items and self._reserved(k, v, used, now):
                continue
            found.append((used, -self._size_of(v), k))
        return [k for _, _, k in sorted(found, key=lambda t: (t[0], t[1]))]

    def evict(self, keep: Hashable | None = None, now: float | None = None, pending: int = 0) -> list[Hashable]:
        now = time.monotonic() if now is None else now
        with self.lock:
            self._note_births(now)
            gone = super().evict(keep=keep, now=now, pending=pending)
            self._note_births(now)
            return gone

    def drop(self, key: Hashable) -> V | None:
        with self.lock:
            self._born.pop(key, None)
        return super().drop(key)

    def could_fit(self, key: Hashable, nbytes: int, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self.lock:
            self._note_births(now)
            kept = [v for k, (v, used) in self._entries.items() if k != key and self._size_of(v) > 0
                    and self._reserved(k, v, used, now)]
            fits_bytes = self.max_bytes is None or sum(map(self._size_of, kept)) + nbytes <= self.max_bytes
            return fits_bytes and len(kept) + 1 <= self.max_entries

    def full_message(self, key: Hashable, noun: str, what: str, now: float | None = None) -> str:
        """Why the whole store has no room (everyone's reservations), and when the first one frees up."""
        now = time.monotonic() if now is None else now
        with self.lock:
            waits = [self.frees_at(k, now) for k, (v, _) in self._entries.items()
                     if k != key and (self._size_of(v) > 0 or self._busy(v))]
        timed = [w for w in waits if w is not None]
        when = (f"the first reservation ends in {_minutes(min(timed) - now)}" if timed
                else "room frees up as running jobs end")
        return (f"The server's {what} is full: other visitors are using theirs (a {noun} stays reserved "
                f"{_minutes(self.keep_s)} after its last use, {_minutes(self.max_age_s)} at most); {when}. "
                "Try again then.")

    # ------------------------------------------------------------------ shares per client
    def share_bytes(self, nbytes: int = 0) -> int | None:
        """A client's share of the memory (never less than one item of `nbytes`)."""
        return None if self.max_bytes is None else max(int(nbytes), int(self.share * self.max_bytes))

    def share_items(self) -> int:
        return max(1, int(self.share * self.max_entries))

    def client_holds(self, key: Hashable, guess: int = 0) -> list[tuple[Hashable, int]]:
        """The other sessions of `key`'s client that hold an item or run a job: (session, bytes; a
        running job with no item yet counts `guess`)."""
        client = self._client_of(key)
        with self.lock:
            return [(k, self._size_of(v) or (guess if self._busy(v) else 0)) for k, (v, _) in self._entries.items()
                    if k != key and (self._size_of(v) > 0 or self._busy(v)) and self._client_of(k) == client]

    def _over(self, held: list[tuple[Hashable, int]], nbytes: int) -> bool:
        limit = self.share_bytes(nbytes)
        return len(held) + 1 > self.share_items() or (limit is not None and sum(b for _, b in held) + nbytes > limit)

    def client_refusal(self, key: Hashable, nbytes: int, noun: str, what: str,
                       now: float | None = None) -> str | None:
        """None when `key`'s client may hold one more item of `nbytes` (its own unreserved items go
        first to make room); else why not: the share, what holds it, and when it frees up."""
        now = time.monotonic() if now is None else now
        with self.lock:
            self._note_births(now)
            held = self.client_holds(key, nbytes)
            if not self._over(held, nbytes):
                return None
            gone: list[Hashable] = []
            for k in self._evictable(key, now, items=True):  # the client's own items it no longer uses
                if not self._over(held, nbytes):
                    break
                if self._client_of(k) == self._client_of(key):
                    self._remove(k, GONE_ROOM, gone)
                    held = [(h, b) for h, b in held if h != k]
            if not self._over(held, nbytes):
                return None
            waits = [self.frees_at(k, now) for k, _ in held]
            return self._share_message(held, waits, nbytes, noun, what, now)

    def _share_message(self, held, waits, nbytes: int, noun: str, what: str, now: float) -> str:
        limit = self.share_bytes(nbytes)
        mb = sum(b for _, b in held) / 2**20
        size = (f" ({mb:,.0f} MB of its {limit / 2**20:,.0f} MB share of {what})" if limit is not None
                else f" (its share of {what})")
        timed = [w for w in waits if w is not None]
        when = (f"The next one frees up in {_minutes(min(timed) - now)} (a {noun} stays reserved "
                f"{_minutes(self.keep_s)} after its last use, {_minutes(self.max_age_s)} at most)"
                if timed else f"It frees up when a running {noun} job of yours ends")
        plural = noun if len(held) == 1 else noun + ("es" if noun.endswith(("x", "s")) else "s")
        return (f"Your address already holds {len(held)} {plural}{size}: each "
                f"address (not each page) gets {self.share:.0%} of {what}, so that nobody can lock others out. "
                f"{when}, or close one of your other pages and its {noun} goes at once.")
