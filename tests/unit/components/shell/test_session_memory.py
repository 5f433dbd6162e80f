"""Gradio's per-session state, bounded (components.shell.session_memory): no copies of values or configs."""

from __future__ import annotations

import gradio as gr
from gradio.state_holder import SessionState

from components.shell import session_memory


def test_a_session_keeps_no_copy_of_values_but_keeps_its_state_and_updates():
    session_memory.bound()
    session_memory.bound()  # idempotent
    with gr.Blocks() as demo:
        box = gr.Textbox()
        keep = gr.State(None)
    state = SessionState(demo)
    assert state.config_values == {}
    state._update_value_in_config(box._id, "x" * 1_000_000)  # an event's 1 MB output
    assert state.config_values == {}
    state[keep._id] = {"step": 3}  # gr.State still works per session
    assert state[keep._id] == {"step": 3}
    state[box._id] = gr.Textbox(visible=False)  # a prop update still applies to this session
    assert state[box._id].visible is False and state.config_values == {}
