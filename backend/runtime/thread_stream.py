"""A training run's worker thread, relayed as a stream of events.

A long run trains on a thread of its own (so a Stop or a closed stream is seen between steps) and puts
its events on a queue; the request's generator yields them. Both live runs (the Train tab's NER and the
Multilingual tab's own run) relay the same way: an {"event": "error"} is raised in the generator, None
ends the stream, and closing the stream (a Stop, a vanished session) sets the run's flag and waits for the
thread, which ends before its next step."""

from __future__ import annotations

import queue
import threading
from typing import Callable, Iterator


def relay(work: Callable[[queue.Queue], None], flag: threading.Event, name: str) -> Iterator[dict]:
    """Start `work(q)` on a daemon thread named `name`; yield what it puts on `q` until None."""
    q: queue.Queue = queue.Queue()
    thread = threading.Thread(target=work, args=(q,), name=name, daemon=True)
    thread.start()
    try:
        while (ev := q.get()) is not None:
            if ev["event"] == "error":
                raise ev["error"]
            yield ev
    finally:
        flag.set()
        thread.join()
