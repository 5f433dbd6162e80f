"""One object per process, made on first use: the hub, the search service, the training store."""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class ProcessWide(Generic[T]):
    """`get()` returns the one instance `make()` built (thread-safe); `reset()` forgets it (tests)."""

    def __init__(self, make: Callable[[], T]):
        self._make = make
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    def set(self, value: T | None) -> None:
        with self._lock:
            self._value = value

    def reset(self) -> None:
        self.set(None)
