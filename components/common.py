"""What every tab shares: the model queue, readable errors, and the 'served by' badge."""

from __future__ import annotations

import functools
import inspect

import gradio as gr

from backend.config import get_settings
from backend.errors import LabError

# Model work shares one concurrency group so a CPU box is not oversubscribed.
MODEL_QUEUE: dict = {"concurrency_id": "model", "concurrency_limit": get_settings().model_concurrency}

_SOURCE_WORDS = {
    "package": "packaged offline model",
    "cache": "local Hugging Face cache",
    "hub": "Hugging Face Hub",
    "local-dir": "your directory",
}


def user_errors(fn):
    """Show a LabError's message in the UI (gr.Error) instead of a traceback.

    `functools.wraps` keeps the signature so Gradio still injects gr.Request / gr.Progress.
    """
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except LabError as exc:
                raise gr.Error(str(exc)) from exc

        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LabError as exc:
            raise gr.Error(str(exc)) from exc

    return wrapper


def short(text: str, n: int = 40) -> str:
    """Text cut to `n` characters with an ellipsis, for legends and table cells."""
    return text if len(text) <= n else text[: n - 1] + "…"


def model_badge(described: dict | None, seconds: float | None = None) -> str:
    """One markdown line naming the checkpoint that served a result, where from, and how."""
    if not described:
        return ""
    source = _SOURCE_WORDS.get(described.get("source") or "", described.get("source") or "?")
    parts = [f"Served by **{described.get('checkpoint')}** ({source}"]
    if described.get("device"):
        parts.append(f", {described['device']} {described.get('dtype') or ''}".rstrip())
    parts.append(")")
    method = described.get("method")
    if method == "instruct-fallback":
        parts.append(" · *instruct-model fallback*: no dedicated local model, the instruct decoder was prompted for this task")
    elif method == "embedding-similarity":
        parts.append(" · *embedding similarity* to the label descriptions (no fine-tuned classifier offline)")
    if seconds is not None:
        parts.append(f" · {seconds:.2f} s")
    return "".join(parts)
