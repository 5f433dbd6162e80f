"""The shell every tab stands on: lanes and admission, budget and cancel, readable errors,
widgets for the API, figures, the model badge, links, and (in `gradio_patches` alone) every touch of
a Gradio internal. A tab imports what it needs from here and never from another tab."""

from components.shell.badge import model_badge, short
from components.shell.cancel import bounded_steps, request_budget, user_errors
from components.shell.errors import clear_on_error, error_box, md_text, readable_error
from components.shell.figures import NOTICE_PREFIX, figure_tools, notice, notice_line, notice_of
from components.shell.lanes import (BATCH_LANE, DECODE_LANE, LONG_LANE, SHORT_LANE, admit_fairly, server_lane,
                                    server_or_long_slot, lane_refusal, long_slot_for)
from components.shell.plans import planned
from components.shell.widgets import (Checkbox, CheckboxGroup, Dropdown, File, Number, Radio, Slider, Textbox,
                                      file_path, model_box, raw_json)

__all__ = [
    "BATCH_LANE", "DECODE_LANE", "LONG_LANE", "NOTICE_PREFIX", "SHORT_LANE", "Checkbox",
    "CheckboxGroup", "Dropdown", "File", "Number", "Radio", "Slider", "Textbox", "admit_fairly", "bounded_steps",
    "clear_on_error", "server_lane", "server_or_long_slot", "error_box",
    "figure_tools", "file_path", "lane_refusal", "long_slot_for", "md_text", "model_badge", "model_box", "notice",
    "notice_line", "notice_of", "planned", "raw_json", "readable_error", "request_budget", "short", "user_errors",
]
