"""How each Pipelines task is served on this app right now: the serving decision (the hub's
resolution of the task's role) with its method in the words of `config.METHOD_WORDS`, so the
tab's intro says what the results will say. Resolution only: no model loads."""

from __future__ import annotations

from backend import hub
from backend.runtime import config
from backend.runtime.errors import ModelLoadError


def serving_methods() -> list[dict]:
    """One row per task: task, role, method, its name and description, and the checkpoint."""
    rows = []
    for task, role in config.TASK_ROLES.items():
        try:
            r = hub.resolve(role)
        except ModelLoadError as exc:
            rows.append({"task": task, "role": role, "method": None, "name": "unavailable",
                         "text": str(exc), "checkpoint": None})
            continue
        rows.append({"task": task, "role": role, "method": r.method, "name": config.method_name(r.method),
                     "text": config.method_text(r.method, config.role_name(role)), "checkpoint": r.checkpoint})
    return rows
