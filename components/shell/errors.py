"""A failed request, in the page and in the log: one readable inline message, nothing of the
old result left under it, and text escaped so a quoted input never becomes markup."""

from __future__ import annotations

import html
import logging
import re
import sys
import threading

import gradio as gr
from cachetools import FIFOCache

from components.shell import gradio_patches, lifecycle

# ---------------------------------------------------------------- input errors and escaping
def _input_log() -> logging.Logger:
    log = logging.getLogger("transformers_lab.input")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s input error in %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


# ---------------------------------------------------------------- a failed event, in the page
# Gradio marks every output of a failed event with a red "Error" badge and keeps the old result
# under it. `clear_on_error` chains a `.failure` listener that blanks the outputs and shows the
# message once, inline, where the result would be. The failed handler's message reaches that
# listener through `_LAST_ERROR`, keyed by the browser session (bounded: a vanished session's
# entry is pushed out by newer ones).
_LAST_ERROR_MAX = 512
_LAST_ERROR: FIFOCache = FIFOCache(_LAST_ERROR_MAX)  # session -> message; the least recently written goes first
_ERROR_LOCK = threading.Lock()


def _remember_error(message: str, session: str | None = None) -> None:
    """Keep `message` for the session's failure listener (`session`: the request's, else this thread's)."""
    session = session or gradio_patches.current_session_hash()
    if not session:
        return
    with _ERROR_LOCK:
        _LAST_ERROR[session] = message


def remember_refusal(session: str, message: str, where: str = "?") -> None:
    """A request the door refused (gradio_patches.failed_at_once): its message shows as a handler's error does,
    and the log has one line for it, naming the handler, as for a handler's own refusal."""
    _remember_error(message, session)
    _input_log().info("%s (refused at the door): %s", where, message.replace("\n", " ")[:300])


def error_box(elem_id: str | None = None) -> gr.Markdown:
    """Where a tab's error shows, inline, above its results (hidden until an event fails)."""
    return gr.Markdown("", visible=False, elem_id=elem_id, elem_classes=["tlab-error"])


def clear_on_error(event, outputs: list, box: gr.Markdown) -> None:
    """After `event` fails: blank `outputs` and show the error once in `box`; after it
    succeeds: hide `box`. Put `box` (from `error_box()`) where the result would be."""

    def failed(request: gr.Request):
        with _ERROR_LOCK:
            message = _LAST_ERROR.pop(getattr(request, "session_hash", None) or "", None)
        if message is None:  # a Stop (a cancel fails the event too), or a bug Gradio reports itself
            return [gr.update() for _ in outputs] + [gr.update(value="", visible=False)]
        return [None] * len(outputs) + [gr.update(value=f"**⚠️ {md_text(message)}**", visible=True)]

    def hidden():
        return gr.update(value="", visible=False)

    lifecycle.after(event, "failure", failed, None, [*outputs, box])
    lifecycle.after(event, "success", hidden, None, [box])


def readable_error(exc: Exception, where: str = "") -> gr.Error:
    """A LabError as a gr.Error: one log line, no traceback (`print_exception=False`; any
    other exception is a bug, and Gradio logs it with its traceback).

    Gradio renders an error message as HTML in the browser's toast and messages may quote
    the caller's input, so < > & are escaped: a quoted value can never become markup."""
    # A lone surrogate quoted from the input is no text (no encoder takes it): shown as its escape.
    message = re.sub(r"[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", str(exc))
    _remember_error(message)
    _input_log().info("%s: %s", where or "?", message.replace("\n", " ")[:300])
    # Short-lived: the message also stays inline (clear_on_error), and toasts that outlive the
    # error they report pile up ("Error (2)" holding a message about an input already fixed).
    return gr.Error(html.escape(message, quote=False), duration=5, print_exception=False)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!#|~:@$])")  # CommonMark lets any ASCII punctuation be escaped


def md_text(text) -> str:
    """User or corpus text, safe inside Markdown: HTML escaped, and the characters that make
    links, images, code or emphasis backslash-escaped (':' and '@' too, so no URL or address
    is auto-linked): `![x](http://...)` shows as text and the browser fetches nothing."""
    text = html.escape(str(text if text is not None else ""), quote=False)  # no &#x27;: its # would be escaped
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")
    text = text.replace("\\:/", "\\:\\/")  # no '://' left at all, not even after an escaped ':'
    return re.sub(r"(?i)\bwww\.", lambda m: m.group(0)[:-1] + "\\.", text)


