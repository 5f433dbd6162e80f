"""A request's plan: where its work runs and whether it is long, decided once as it joins the queue.

The app's shell asks the tab's backend for the plan when the request is admitted (no network, no
model: the server's last health check only), keeps it with the request, and hands the same plan to
the handler and the backend entry point, which act on it instead of asking again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    """on_server: the generation server may write this request's replies (its rules allow it; the
    backend still falls back here, with a note, if the server does not answer).
    long: the work will most likely run in this process and take long (the long lane's slot).
    note: why it runs here although a server is configured (a model-box model, beams...), or None."""

    on_server: bool = False
    long: bool = False
    note: str | None = None
