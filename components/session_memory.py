"""What Gradio keeps per visitor, bounded.

Gradio copies the value of every input and output of every event into the visitor's session
(`SessionState.config_values`), only so that its deep links (`gr.DeepLinkButton`, which this app
does not use) can rebuild the page later; and it keeps up to 10,000 sessions. Measured here: a
20,000-character /tokenize left ~11 MB in each new session, so 150 visitors took the process
from 0.6 to 2.3 GB and nothing ever gave it back. `bound()` stops the copies (the values live
in the page and in the API response, not on the server) and `STATE_SESSIONS` sets how many
sessions Gradio keeps at all (the oldest goes first; what they hold is small now: gr.State).
"""

from __future__ import annotations

STATE_SESSIONS = 1000  # sessions whose gr.State Gradio keeps (launch(state_session_capacity=...))


def bound() -> None:
    """Keep no per-session copies of component values or configs for deep links (idempotent)."""
    from gradio.state_holder import SessionState

    if getattr(SessionState, "_tlab_bounded", False):
        return
    original_init = SessionState.__init__

    def __init__(self, blocks) -> None:
        original_init(self, blocks)
        self.config_values = {}  # every block's config, per session: only deep links read it

    def _update_value_in_config(self, key: int, value) -> None:
        return None  # the input or output value, per session: only deep links read it

    original_setitem = SessionState.__setitem__

    def __setitem__(self, key: int, value) -> None:
        original_setitem(self, key, value)
        self.config_values.pop(key, None)  # the updated block's config with its value: deep links only

    SessionState.__init__ = __init__
    SessionState._update_value_in_config = _update_value_in_config
    SessionState.__setitem__ = __setitem__
    SessionState._tlab_bounded = True
