"""Work rates measured in this process: where every estimate shown before long work comes from.

One table, keyed by the kind of work ("embedding characters", "fine-tuning examples of this
model"), holding units per second, smoothed over the last runs. Before the first measurement an
estimate is None (or the caller's stated rough guess), never a number pretending to be measured.
"""

from __future__ import annotations

import threading
from typing import Hashable


class Rates:
    def __init__(self) -> None:
        self._per_s: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, units: float, seconds: float) -> None:
        """Record `units` of work done in `seconds` (averaged with the previous rate)."""
        if units <= 0 or seconds <= 0:
            return
        rate = units / seconds
        with self._lock:
            old = self._per_s.get(key)
            self._per_s[key] = rate if old is None else 0.5 * old + 0.5 * rate

    def per_s(self, key: Hashable) -> float | None:
        """Units per second measured for `key`, or None before any measurement."""
        with self._lock:
            return self._per_s.get(key)

    def estimate(self, key: Hashable, units: float, rate: float | None = None) -> float | None:
        """Seconds for `units` at `rate` (default: the measured one); None when nothing was measured."""
        rate = self.per_s(key) if rate is None else rate
        return None if not rate else units / rate

    def forget(self, key: Hashable | None = None) -> None:
        with self._lock:
            if key is None:
                self._per_s.clear()
            else:
                self._per_s.pop(key, None)


RATES = Rates()
