"""A stand-in for Hugging Face's `spaces` package that behaves like ZeroGPU where it matters.

On ZeroGPU a model may only run inside a function decorated with `spaces.GPU`. This fake keeps
that rule: importing it installs a global forward hook on every torch module that raises when
no `spaces.GPU` call is active, and it records every function it wraps (and every call) in
the file named by FAKE_SPACES_LOG, one JSON object a line. The e2e test starts the app with
this folder first on PYTHONPATH and SPACES_ZERO_GPU=1.

A counter, not a thread-local, marks "inside": on a real Space the wrapped function runs in a
worker process, and the threads it starts (streaming generation) are inside it too. Like the
real one, it sends arguments and results through pickle, so a lambda passed as a progress
callback, or a model object returned to the caller, fails here as it would there.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import pickle
import threading

import torch

__all__ = ["GPU", "OutsideGPUError"]

_active = 0
_lock = threading.Lock()


class OutsideGPUError(RuntimeError):
    """A model ran outside any spaces.GPU call: on ZeroGPU it would find no CUDA device."""


def _log(event: dict) -> None:
    path = os.environ.get("FAKE_SPACES_LOG")
    if path:
        with _lock, open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(event) + "\n")


def _guard(module, args):
    if _active <= 0:
        name = type(module).__name__
        _log({"event": "outside", "module": name})
        raise OutsideGPUError(f"{name}.forward ran outside spaces.GPU: on ZeroGPU there is no GPU here.")


torch.nn.modules.module.register_module_forward_pre_hook(_guard)


def _crosses_processes(name: str, what: str, value):
    """Raise as ZeroGPU does when a value cannot travel between the app and its GPU worker."""
    try:
        pickle.dumps(value)
    except Exception as exc:
        _log({"event": "unpicklable", "fn": name, "what": what, "error": str(exc)[:200]})
        raise pickle.PicklingError(f"{name}: its {what} cannot be sent to a ZeroGPU worker ({exc}).") from exc
    return value


def _enter(name: str) -> None:
    global _active
    with _lock:
        _active += 1
    _log({"event": "call", "fn": name})


def _leave() -> None:
    global _active
    with _lock:
        _active -= 1


def GPU(fn=None, *, duration: int = 60, **_ignored):
    """`@spaces.GPU` or `@spaces.GPU(duration=...)`, for plain and generator functions."""

    def wrap(f):
        name = f"{f.__module__}.{f.__qualname__}"
        _log({"event": "wrap", "fn": name, "duration": duration})
        if inspect.isgeneratorfunction(f):

            @functools.wraps(f)
            def gen(*args, **kwargs):
                _crosses_processes(name, "arguments", (args, kwargs))
                _enter(name)
                try:
                    for item in f(*args, **kwargs):
                        yield _crosses_processes(name, "output", item)
                finally:
                    _leave()

            return gen

        @functools.wraps(f)
        def call(*args, **kwargs):
            _crosses_processes(name, "arguments", (args, kwargs))
            _enter(name)
            try:
                return _crosses_processes(name, "result", f(*args, **kwargs))
            finally:
                _leave()

        return call

    return wrap(fn) if fn is not None else wrap
