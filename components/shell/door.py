"""The door: an endpoint's contract (backend/runtime/contract.py: its argument ranges and its cost) checked
as a request joins the queue, before it waits in a lane, so a refusal comes at once and says what would fit.

`declare` (endpoint.py) attaches each endpoint's contract to its handler; admission (lanes.py) asks
`refusal(fn, data)` with the values the request sent, in the endpoint's argument order. A handler keeps its
own checks: a test or a script that calls it directly is checked there, in the same words.
"""

from __future__ import annotations

import inspect
import logging

from backend.runtime import clients
from backend.runtime import contract as contracts
from backend.runtime.errors import InputError
from components.shell import plans

LOG = logging.getLogger("tlab.door")
SPECIAL_PARAMETERS = ("progress", "request")  # what Gradio injects: never an API argument


def attach(fn, contract: contracts.Contract, names: list[str]) -> None:
    """Keep `contract` with `fn` (the handler the page calls), for API arguments `names` in order."""
    fn.tlab_contract = (contract, list(names))


def api_parameters(fn) -> list[str]:
    """An API-only endpoint's argument names: its handler's parameters, less what Gradio injects."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.name not in SPECIAL_PARAMETERS
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def contract_of(fn) -> tuple[contracts.Contract, list[str]] | None:
    """The contract attached to `fn`, looked up through Gradio's BlockFunction and the shell's wrappers."""
    return plans.declared(fn, "tlab_contract")


def _paths(value):
    """The file paths a request's value names (Gradio's FileData dicts, lists of them)."""
    if isinstance(value, dict):
        if isinstance(value.get("path"), str):
            yield value["path"]
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _paths(v)


def foreign_upload(data, client: str | None) -> str | None:
    """Why a request naming a file another address uploaded is refused (None: every file is its own)."""
    for path in _paths(list(data or ())):
        owner = clients.owner_of(path)
        if owner is not None and owner != client:
            return ("A file in this request was uploaded by another visitor: a file can be used only by the "
                    "address that uploaded it. Upload your own copy.")
    return None


def refusal(fn, data, request=None, plan=None) -> str | None:
    """Why this request may not be admitted (a file of another address, out of its ranges, over a budget), or
    None. `plan`: the one plan admission made for it (the cost of work the generation server does is not this
    process's). A cost function that fails on values it was not written for admits the request: the handler's
    own checks then decide."""
    why = foreign_upload(data, clients.of_request(request)) if request is not None else None
    if why:
        return why
    found = contract_of(fn)
    if found is None:
        return None
    contract, names = found
    values = dict(zip(names, list(data or ())))
    try:
        contracts.admit(contract, values, plan)
    except InputError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001  a cost estimate that could not read these values
        LOG.exception("contract of %s could not be checked", getattr(fn, "name", fn))
    return None


def admit(fn, data, request=None) -> tuple[str | None, object]:
    """As a request joins the queue: its one plan (`plans.plan_of`), then why the door refuses it or None
    -> (why, plan). The plan goes on to the lanes' admission and the handler: nothing plans it again."""
    plan = plans.plan_of(fn, data)
    return refusal(fn, data, request, plan), plan
