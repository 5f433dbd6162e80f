"""The model badge: which checkpoint served a result, where from, and how (config.METHOD_WORDS)."""

from __future__ import annotations

from backend.runtime import config
from components.shell.errors import md_text

_SOURCE_WORDS = {
    "package": "packaged offline model",
    "cache": "local Hugging Face cache",
    "hub": "Hugging Face Hub",
    "local-dir": "your directory",
    "session": "trained in your session",
}



def short(text: str, n: int = 40) -> str:
    """Text cut to `n` characters with an ellipsis, for legends and table cells."""
    return text if len(text) <= n else text[: n - 1] + "…"


def model_badge(described: dict | None, seconds: float | None = None) -> str:
    """One markdown line naming the checkpoint that served a result, where from, and how."""
    if not described:
        return ""
    source = _SOURCE_WORDS.get(described.get("source") or "", md_text(described.get("source") or "?"))
    parts = [f"Served by **{md_text(described.get('checkpoint'))}** ({source}"]
    if described.get("device"):
        parts.append(md_text(f", {described['device']} {described.get('dtype') or ''}".rstrip()))
    parts.append(")")
    method = described.get("method")
    if method and method != config.METHOD_MODEL:  # how it is served, in the words of config.METHOD_WORDS
        parts.append(f" · *{md_text(config.method_name(method))}*")
        if method == config.METHOD_FINETUNED:
            acc, f1 = described.get("test_accuracy"), described.get("test_f1")
            score = (f", test accuracy {acc:.2f}" if isinstance(acc, (int, float))
                     else f", test entity F1 {f1:.2f}" if isinstance(f1, (int, float)) else "")
            parts.append(md_text(f": {config.method_text(method)}; trained on "
                                 f"{described.get('trained_on') or 'shipped data'}{score}"))
        elif method == config.METHOD_SESSION:
            parts.append(md_text(f": {described.get('classifier') or 'your classifier'}, from the Train tab"))
        else:
            parts.append(md_text(f": {config.method_text(method, config.role_name(described.get('role')))}"))
    if seconds is not None:
        parts.append(f" · {model_time(seconds)}")
    return "".join(parts)


def model_time(seconds: float) -> str:
    """The server's own seconds for a result, in the words the page knows (guide.SERVER_FIGURES): the
    label says it is the model's time only, and the page shows the learner's wait beside it when the
    two differ (components/shell/assets/wait.js). Plain text, no markup inside: the page reads it as one piece."""
    return f"model time {seconds:.2f} s"

