"""Errors whose message is written for the person using the app.

The UI turns any `LabError` into a readable message; anything else is a bug and shows as
one. Keep messages actionable: say what is wrong and what to do.
"""


class LabError(Exception):
    """An error whose `str()` is fit to show a user."""


class InputError(LabError, ValueError):
    """Bad input from a user or API caller (empty, too long, out of range, malformed)."""


class ModelLoadError(LabError):
    """A model for a role could not be resolved or loaded; the message says what to do."""

    def __init__(self, message: str, role: str | None = None, checkpoint: str | None = None):
        super().__init__(message)
        self.role = role
        self.checkpoint = checkpoint
