"""No raw error reaches a visitor, from any handler the page exposes.

Every event handler can be called by its `fn_index`, private ones included (the plot redraws,
the example loaders, the reference-clearing hooks), with any values a stranger sends. A
handler that trips over such a value raised a bare `'dict' object has no attribute 'strip'`,
and Gradio's own input processing answered with its internals ("Could not preprocess input
component at index 0 ... Original error: ..."). `guard(demo)` wraps every handler: a `LabError`
becomes its readable message, anything else a plain sentence (the traceback goes to the log);
and a value a component cannot read is said as such, without Gradio's internals.
"""

from __future__ import annotations

import functools
import inspect
import logging

import gradio as gr

from backend.runtime.errors import LabError
from components.shell import gradio_patches
from components.shell.errors import readable_error

LOG = logging.getLogger("transformers_lab.guard")


def _unexpected(name: str) -> gr.Error:
    LOG.exception("handler %s failed on the values it was sent", name)
    return gr.Error(f"This action ({name.strip('_')}) could not use the values it was sent. From the page, reload "
                    "it and try again; from the API, /gradio_api/info says what each argument takes.",
                    duration=5, print_exception=False)


def _guarded(fn):
    name = getattr(fn, "__name__", "handler")

    def convert(exc: Exception) -> Exception:
        if isinstance(exc, gr.Error):
            return exc
        if isinstance(exc, LabError):
            return readable_error(exc, name)
        return _unexpected(name)

    if inspect.isasyncgenfunction(fn):
        @functools.wraps(fn)
        async def agen(*args, **kwargs):
            try:
                async for item in fn(*args, **kwargs):
                    yield item
            except Exception as exc:
                raise convert(exc) from None
        wrapped = agen
    elif inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def coro(*args, **kwargs):
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                raise convert(exc) from None
        wrapped = coro
    elif inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except Exception as exc:
                raise convert(exc) from None
        wrapped = gen
    else:
        @functools.wraps(fn)
        def call(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                raise convert(exc) from None
        wrapped = call
    wrapped._tlab_guarded = True
    return wrapped


def _processing_message(block_fn, index, block, value, is_input, original_error) -> str:
    """What Gradio says when a component cannot read a value (it said its internals)."""
    LOG.info("component %s could not %s %r: %s", type(block).__name__, "read" if is_input else "show",
             type(value).__name__, original_error)
    kind = type(block).__name__.lower()
    if is_input:
        return (f"Input {index + 1} of this action (a {kind}) cannot read a value of type {type(value).__name__}: "
                "send what the page sends for it (/gradio_api/info lists each argument).")
    return f"This action produced a result its {kind} cannot show; nothing was changed on the page."


def _too_few(block_fn, inputs) -> None:
    """Gradio listed the components' reprs (`<components.shell.Textbox object at 0x...>`)."""
    expected = len(gradio_patches.fn_inputs(block_fn))
    if len(inputs) < expected:
        raise gr.Error(f"This action takes {expected} values and got {len(inputs)}: "
                       "/gradio_api/info lists them, in order.", print_exception=False)


def _file_paths(value, depth: int = 0):
    """The `path` of every file payload (a dict with one, as gradio_client sends them) in a value."""
    if depth > 4:
        return
    if isinstance(value, dict):
        if isinstance(value.get("path"), str):
            yield value["path"]
        for v in value.values():
            if isinstance(v, (dict, list)):
                yield from _file_paths(v, depth + 1)
    elif isinstance(value, list):
        for v in value[:64]:
            yield from _file_paths(v, depth + 1)


def _is_url(path: str) -> bool:
    return path.strip().lower().startswith(("http://", "https://", "//", "ftp://", "file://"))


def _argument_name(block_fn, index: int) -> str:
    """The argument as /gradio_api/info names it (Gradio's `input_parameter_names`, else the handler's
    own parameters), for a refusal that says which one is wrong."""
    names = gradio_patches.parameter_names(block_fn)
    return names[index] if index < len(names) and names[index] else f"param_{index}"


def _file_refusal(block_fn, inputs, urls_only: bool) -> gr.Error | None:
    """A file argument that is a URL (`urls_only`), or else the first file argument: named, with what it takes."""
    for i, value in enumerate(inputs or []):
        paths = list(_file_paths(value))
        if not paths or (urls_only and not any(_is_url(p) for p in paths)):
            continue
        given = "a URL" if any(_is_url(p) for p in paths) else "a path on the server"
        return gr.Error(f"{_argument_name(block_fn, i)} (argument {i + 1}) takes a file uploaded to this app "
                        f"(with gradio_client: handle_file(path), which uploads it first); {given} was given. "
                        "This server does not fetch files: download it and send the file itself.",
                        print_exception=False)
    return None


def _shape_refusal(block_fn, inputs, exc: Exception) -> gr.Error:
    """A value that is not the shape its component's data model takes (a plot, a table): named."""
    for i, block in enumerate(gradio_patches.fn_inputs(block_fn)):
        model = getattr(block, "data_model", None)
        value = inputs[i] if i < len(inputs or []) else None
        if model is None or value is None:
            continue
        try:
            model.model_validate(value, context={"validate_meta": True})
        except Exception:  # noqa: BLE001  the value this model cannot read
            LOG.info("input %d (%s) has the wrong shape: %s", i, type(block).__name__, str(exc)[:300])
            return gr.Error(f"{_argument_name(block_fn, i)} (argument {i + 1}, a {type(block).__name__.lower()}) "
                            f"cannot read a value of type {type(value).__name__}: send what the page sends for it "
                            "(/gradio_api/info lists each argument).", print_exception=False)
    LOG.info("a value had the wrong shape: %s", str(exc)[:300])
    return gr.Error("A value of this action has the wrong shape for its component: send what the page sends "
                    "for it (/gradio_api/info lists each argument).", print_exception=False)


def _uploaded_files_only(preprocess_data):
    """A file argument naming a path on the server was refused with that path in full, and one given
    as a URL was fetched by the server (past the upload limits) or refused by Gradio's address check
    in words that named no argument ("Hostname 127.0.0.1 failed validation"). Both are refused here,
    naming the argument; a URL before anything is fetched."""
    from gradio.exceptions import InvalidPathError

    @functools.wraps(preprocess_data)
    async def wrapped(block_fn, inputs, *args, **kwargs):
        refusal = _file_refusal(block_fn, inputs, urls_only=True)
        if refusal is not None:
            raise refusal
        try:
            return await preprocess_data(block_fn, inputs, *args, **kwargs)
        except InvalidPathError:
            raise (_file_refusal(block_fn, inputs, urls_only=False) or gr.Error(
                "A file argument must be a file uploaded to this app (with gradio_client: handle_file(path)); "
                "the one given was not.", print_exception=False)) from None
        except ValueError as exc:  # pydantic's ValidationError: Gradio checks a plot's or a table's shape
            if type(exc).__name__ != "ValidationError":  # before its own worded preprocess step
                raise
            raise _shape_refusal(block_fn, inputs, exc) from None

    wrapped._tlab_guarded = True
    return wrapped


def guard(demo) -> None:
    """Wrap every handler of `demo` (idempotent) and word Gradio's own input errors."""
    gradio_patches.wrap_handlers(demo, _guarded, "_tlab_guarded")
    gradio_patches.word_input_errors(demo, _processing_message, _too_few, _uploaded_files_only)


class Selection(gr.SelectData):
    """`gr.SelectData` for a handler a stranger may call without a selection: Gradio builds the
    event's data before the handler (and its guard) runs, and `SelectData` read `None["index"]`
    (the fuzz tier's fn_index call answered "'NoneType' object is not subscriptable"). Missing
    data reads as an empty selection; the handler decides what that means."""

    def __init__(self, target, data):
        super().__init__(target, data if isinstance(data, dict) and "index" in data and "value" in data
                         else {"index": None, "value": None, "selected": False})
