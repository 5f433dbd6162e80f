"""An endpoint's contract: the ranges its arguments may take and what one request costs, checked as the
request is admitted, before it waits in a lane (components/shell/endpoint.py carries one per endpoint).

Why here and not in the handler: a handler's own checks run after its lane wait, so a probe's `batch_size`
of 256 was refused 163 s after it was sent, and a 20,000-passage paste grew the app by gigabytes while it
waited to be told no. A contract says the same things once, as data: the door checks it in milliseconds,
the handler keeps its checks (a script calls it directly), and the contract suite
(tests/fuzz/test_endpoint_extremes.py) reads the ranges to build every endpoint's most extreme call.

    Contract({"text": Text("text"), "top_k": Int(1, 50), "model_box": Free()}, cost=fill_mask_cost)

A cost is memory (MB held beyond the models) and time (seconds of work at this machine's speed,
`backend.runtime.speeds`). Work that stops on its own at the time budget (training, generation: a loop
that checks the budget between steps) declares its longest *step* instead of its whole time (`stoppable`),
so that the budget can end it within a step; work that cannot stop midway declares its whole time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from backend.runtime import memory_budget
from backend.runtime.config import get_settings, text_rule
from backend.runtime.errors import InputError
from backend.runtime.validation import as_bool, as_float, as_int, check_text

STEP_LIMIT_S = 10.0  # the longest step a stoppable job may take: the budget ends it within this of its limit
FILLER = ("Transformers read every token of a sentence at once and weigh each against the others. ")


# ------------------------------------------------------------------ ranges
@dataclass(frozen=True)
class Text:
    """Free text under `config.TEXT_RULES[use]` (its length cap; empty allowed or not). `extreme`: the
    longest text for the contract suite, from the valid one it is given (default: the valid text
    followed by plain prose up to the cap)."""
    use: str = "text"
    optional: bool = False  # None / empty is fine whatever the rule says (an optional second text)
    extreme: Callable[[Any, int], str] | None = None

    def check(self, name: str, value):
        if self.optional and (value is None or value == ""):
            return value
        if value is None and text_rule(self.use).allow_empty:
            return value
        return check_text(value, self.use, what=name)

    def most(self, valid):
        cap = min(text_rule(self.use).max_chars, TEXT_EXTREME_CHARS)
        if self.extreme is not None:
            return self.extreme(valid, cap)
        return padded(valid if isinstance(valid, str) else "", cap)


TEXT_EXTREME_CHARS = 200_000  # a pasted corpus is capped in bytes elsewhere; the suite sends at most this


def padded(text: str, chars: int) -> str:
    """`text` followed by plain prose up to `chars` characters (a valid text made as long as allowed)."""
    text = text or ""
    room = max(0, chars - len(text) - 1)
    return (text + " " + (FILLER * (room // len(FILLER) + 1))[:room]).rstrip()[:chars] if room else text[:chars]


def _now(bound):
    """A bound, or a function giving it (a limit that depends on the server's mode, read per request)."""
    return bound() if callable(bound) else bound


@dataclass(frozen=True)
class Int:
    """A whole number in [lo, hi] (`hi` may be a function of nothing: a limit read per request)."""
    lo: Any
    hi: Any
    optional: bool = False  # None (or "") means "the default" / "random"

    def read(self, name: str, value, lo, hi):
        return as_int(name, value, lo=lo, hi=hi)

    def check(self, name: str, value):
        if self.optional and (value is None or value == ""):
            return None
        return self.read(name, value, _now(self.lo), _now(self.hi))

    def most(self, valid):
        return _now(self.hi)


@dataclass(frozen=True)
class Num(Int):
    """A finite number in [lo, hi]."""

    def read(self, name: str, value, lo, hi):
        return as_float(name, value, lo=lo, hi=hi)


@dataclass(frozen=True)
class Choice:
    """One of `values` (compared as given; strings also case-insensitively)."""
    values: tuple
    optional: bool = False

    def check(self, name: str, value):
        if self.optional and (value is None or value == ""):
            return value
        for v in self.values:
            if value == v or (isinstance(value, str) and isinstance(v, str) and value.strip().lower() == v.lower()):
                return v
        shown = ", ".join(str(v) for v in self.values[:12]) + (" ..." if len(self.values) > 12 else "")
        raise InputError(f"{name} must be one of {shown}; got {_shown(value)}.")  # validation.one_of's words

    def most(self, valid):
        return valid if valid in self.values else self.values[-1]


@dataclass(frozen=True)
class Flag:
    def check(self, name: str, value):
        return as_bool(name, value)

    def most(self, valid):
        return True  # a switch on asks for more work (batch, encoder too, learning curve)


@dataclass(frozen=True)
class Many:
    """A list of at most `most_items` values, each one of `values` (a checkbox group), or (values None) each
    checked by `item`. A comma-separated string is read as a list, as the handlers read it."""
    values: tuple | None = None
    max_items: int = 16
    item: Any = None

    def check(self, name: str, value):
        items = value if isinstance(value, (list, tuple)) else (
            [] if value in (None, "") else [v.strip() for v in str(value).split(",")] if isinstance(value, str) else None)
        if items is None:
            raise InputError(f"{name} must be a list, got {_shown(value)}.")
        if len(items) > self.max_items:
            raise InputError(f"{name} has {len(items):,} items; at most {self.max_items} are allowed.")
        if self.values is not None:
            return [Choice(self.values).check(name, v) for v in items]
        return [self.item.check(name, v) for v in items] if self.item is not None else list(items)

    def most(self, valid):
        if self.values is not None:
            return list(self.values[: self.max_items])
        return list(valid or [])


@dataclass(frozen=True)
class Free:
    """A short optional text (a model box, a field name, an id): at most `max_chars` characters."""
    max_chars: int = 300

    def check(self, name: str, value):
        if value is None:
            return None
        if not isinstance(value, str):
            raise InputError(f"{name} must be text, got {_shown(value)}.")
        if len(value) > self.max_chars:
            raise InputError(f"{name} is {len(value):,} characters long; at most {self.max_chars:,} are allowed.")
        return value

    def most(self, valid):
        return valid


@dataclass(frozen=True)
class Scalar:
    """A number, a short text or None (an argument that takes either, e.g. a head number or "mean")."""
    max_chars: int = 100

    def check(self, name: str, value):
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str) and len(value) <= self.max_chars:
            return value
        raise InputError(f"{name} must be a number or a short text, got {_shown(value)}.")

    def most(self, valid):
        return valid


@dataclass(frozen=True)
class Json:
    """A JSON value (an object, a list, or its text) of at most `max_chars` characters once written, nested at
    most `max_depth` deep; `items`: at most that many entries when it is a list. The handler reads its fields."""
    max_chars: int = 20_000
    max_depth: int = 8
    max_items: int | None = None
    extreme: Callable[[Any], Any] | None = None

    def check(self, name: str, value):
        if isinstance(value, str):
            if _text_depth(value, self.max_depth + 1) > self.max_depth:  # before its length: the likelier fault
                raise InputError(f"{name} is nested more than {self.max_depth} levels deep.")
            if len(value) > self.max_chars:
                raise InputError(f"{name} is {len(value):,} characters of JSON; at most {self.max_chars:,} are allowed.")
            try:
                value = json.loads(value) if value.strip() else None
            except (ValueError, RecursionError):
                return value  # not JSON: the handler names what is wrong in its own words
        if _depth(value, self.max_depth + 1) > self.max_depth:
            raise InputError(f"{name} is nested more than {self.max_depth} levels deep.")
        try:
            size = len(json.dumps(value, default=str))
        except (TypeError, ValueError, RecursionError):
            raise InputError(f"{name} must be JSON data.") from None
        if size > self.max_chars:
            raise InputError(f"{name} is {size:,} characters of JSON; at most {self.max_chars:,} are allowed.")
        if self.max_items is not None and isinstance(value, list) and len(value) > self.max_items:
            raise InputError(f"{name} has {len(value)} entries; at most {self.max_items} are allowed.")
        return value

    def most(self, valid):
        return self.extreme(valid) if self.extreme is not None else valid


@dataclass(frozen=True)
class Upload:
    """A file argument: Gradio checks it is an upload of this server (components/shell/upload_gate.py)."""

    def check(self, name: str, value):
        return value

    def most(self, valid):
        return valid


def _text_depth(text: str, stop: int) -> int:
    """How deep JSON text nests its brackets (outside strings), read up to `stop`: no parser recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest >= stop:
                return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _depth(value, stop: int, level: int = 0) -> int:
    if level >= stop:
        return level
    if isinstance(value, dict):
        return max([level + 1] + [_depth(v, stop, level + 1) for v in value.values()])
    if isinstance(value, (list, tuple)):
        return max([level + 1] + [_depth(v, stop, level + 1) for v in value])
    return level


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------ cost
@dataclass(frozen=True)
class Cost:
    """What one request will use: `mb` of memory beyond the loaded models, `s` seconds of work at this
    machine's speed; `stoppable`: it checks the budget between steps of at most `step_s` seconds (then
    `s` may exceed the budget: the run stops there with what it did). `what`: the work in words;
    `ask`: how to ask for less, for a refusal."""
    mb: float = 0.0
    s: float = 0.0
    stoppable: bool = False
    step_s: float = 0.0
    what: str = "this request"
    ask: str = "Ask for less work in one request."


SMALL = Cost(mb=64, s=1.0, what="a small request")  # a lookup, a status, one short forward


@dataclass(frozen=True)
class Contract:
    """Argument ranges by API name (every argument the endpoint takes) and `cost(args by name) -> Cost`
    (or a fixed Cost)."""
    ranges: dict
    cost: Cost | Callable[[dict], Cost] = SMALL
    notes: str = ""
    suite: dict = field(default_factory=dict)  # values the contract suite's extreme call takes over the valid call

    def check(self, values: dict) -> dict:
        """The arguments, each checked against its range -> the cleaned values (InputError: the first wrong)."""
        out = dict(values)
        for name, spec in self.ranges.items():
            if name in values:
                out[name] = spec.check(name, values[name])
        return out

    def estimate(self, values: dict) -> Cost:
        return self.cost(values) if callable(self.cost) else self.cost

    def extreme(self, valid: dict) -> dict:
        """The most extreme call the ranges accept, built from a valid one (`valid` by name, with `suite`'s values
        over it: the choice that makes the most work, e.g. a pasted corpus rather than a built-in one)."""
        valid = {**valid, **{k: v for k, v in self.suite.items() if k in valid}}
        return {name: (self.ranges[name].most(value) if name in self.ranges else value) for name, value in valid.items()}


def refusal(cost: Cost) -> str | None:
    """Why a request of this cost may not run here (None: it may): over the request's memory share, over the
    time budget for work that cannot stop midway, or a step too long for the budget to end it in time."""
    share = memory_budget.share_mb()
    if cost.mb > share:
        return (f"{cost.what[:1].upper()}{cost.what[1:]} would hold about {cost.mb:,.0f} MB while it runs, over this "
                f"server's {share:,.0f} MB per request (TLAB_REQUEST_MEMORY_MB). {cost.ask}")
    budget_s = float(get_settings().time_budget_s)
    if budget_s > 0 and not cost.stoppable and cost.s > budget_s:
        return (f"{cost.what[:1].upper()}{cost.what[1:]} would take about {cost.s:,.0f} s at this server's measured "
                f"speed, over its time budget of {budget_s:g} s per request (TLAB_TIME_BUDGET_S). {cost.ask}")
    if cost.stoppable and cost.step_s > STEP_LIMIT_S:
        return (f"One step of {cost.what} would take about {cost.step_s:,.0f} s here: too long for Stop or the time "
                f"budget to end it in time (at most {STEP_LIMIT_S:g} s a step). {cost.ask}")
    return None


PLAN = "__plan__"  # the key under which a cost function finds the request's plan (None: no planner declared)


def admit(contract: Contract, values: dict, plan=None) -> tuple[dict, Cost]:
    """Check `values` against `contract` and its cost against this server's budgets -> (cleaned values,
    the cost); InputError with the reason otherwise. `plan`: the request's one plan, made at admission
    (backend.runtime.plan.Plan: may the generation server do it?), handed to the cost as `values[PLAN]`."""
    cleaned = contract.check(values)
    cost = contract.estimate({**cleaned, PLAN: plan})
    why = refusal(cost)
    if why:
        raise InputError(why)
    return cleaned, cost

