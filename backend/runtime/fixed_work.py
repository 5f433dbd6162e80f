"""A model built here once (at set-up, or on first use) trains by a fixed amount of work, never "as
many steps as fit in N seconds" (a busy box once ran 4 steps in its minute and scored 0.49), inside
`budget.detached()`, so a slow box only waits longer for the same model. `finished` refuses to cache
a run that stopped short; `first_use` is the progress line of a model trained on first use.
"""

from __future__ import annotations

from typing import Callable


def cut_short(steps: int, total: int, what: str, why: str | None = None) -> RuntimeError:
    return RuntimeError(f"{what} stopped after {steps} of {total} steps{f' ({why})' if why else ''}; "
                        "nothing was cached")


def finished(steps: int, total: int, what: str) -> None:
    """Raise unless the training ran all its steps: nothing is cached from a run cut short."""
    if steps < total:
        raise cut_short(steps, total, what)


def first_use(progress: Callable[[float, str], None] | None, what: str) -> Callable[..., None]:
    """A training loop's `step(done, total, ...)` that reports "Training <what> (first use only)"."""
    def step(done: int, total: int, *_) -> None:
        if progress is not None:
            progress(done / total, f"Training {what} (first use only): step {done} of {total}")

    return step
