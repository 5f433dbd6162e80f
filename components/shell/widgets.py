"""Widgets for the API: they pass what a caller sent unchanged, so the backend's validation names
the parameter as the API lists it (Gradio's own checks name internal handlers)."""

from __future__ import annotations

import gradio as gr

from components.shell import gradio_patches
from components.shell.errors import _remember_error

# ---------------------------------------------------------------- widgets for the API
# Gradio's widgets check or convert a value before the handler sees it: a Slider refuses "abc"
# with "Could not preprocess ... (named run_qa)", naming an internal handler; a Textbox turns a
# dict into its repr. These pass what an API caller sent unchanged, so the backend's validation
# layer reads it and names the parameter as the API lists it. In the browser (`is_template`:
# the same front-end component) they behave exactly like Gradio's.
def _as_sent(self, payload):
    """The value exactly as the caller sent it: the backend's validation reads and names it."""
    return payload


# One line each: Gradio's metaclass reads every component class from this file's source, and its
# front-end picks the widget by the Gradio base class, so these stay plain subclasses.
class Slider(gr.Slider):
    is_template, preprocess = True, _as_sent


class Number(gr.Number):
    is_template, preprocess = True, _as_sent


class Checkbox(gr.Checkbox):
    is_template, preprocess = True, _as_sent


class Radio(gr.Radio):
    is_template, preprocess = True, _as_sent


class Dropdown(gr.Dropdown):
    is_template, preprocess = True, _as_sent


class Textbox(gr.Textbox):
    is_template, preprocess = True, _as_sent


def model_box(elem_id: str | None = None, info: str | None = None) -> gr.Textbox:
    """The model box: empty by default, so an API caller may leave `model_box` out."""
    return Textbox(label="Model", value="", placeholder="profile default", info=info, elem_id=elem_id)


def File(**kwargs) -> gr.File:
    """gr.File whose API value, when it is not an uploaded file (a bare path, a dict without
    Gradio's file marker), gets a readable message naming `file` instead of a validation dump.
    (A factory, not a subclass: Gradio reads a component's props from its __init__ signature.)"""
    f = gr.File(**kwargs)
    gradio_patches.readable_file_model(f, _not_an_upload)
    return f


def _not_an_upload() -> gr.Error:
    message = "file must be an uploaded file: in gradio_client, pass handle_file(path)."
    _remember_error(message)
    return gr.Error(message, print_exception=False)


def raw_json(label: str = "Raw result (JSON: what the API returns)", **kwargs) -> gr.JSON:
    """The API's raw result, one click away but collapsed: the formatted view comes first."""
    with gr.Accordion(label, open=False):
        return gr.JSON(label="JSON", **kwargs)




class CheckboxGroup(gr.CheckboxGroup):
    """gr.CheckboxGroup that passes a caller's value unchanged, so the handler refuses (or ignores) a
    wrong one in its own words (Gradio's own check answers "Value: 'x' (type: <class 'str'>) is not in
    the list of choices", naming neither the parameter nor what to send)."""

    is_template = True

    def preprocess(self, payload):
        return payload


def file_path(file):
    """An upload as Gradio or a client hands it (path, FileData dict, object) -> its path.

    Anything else comes back as it is, for the backend to refuse with a readable message."""
    if file is None or isinstance(file, str):
        return file
    if isinstance(file, dict):
        return file.get("path") or file.get("name")
    return getattr(file, "path", None) or getattr(file, "name", None) or file
