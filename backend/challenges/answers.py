"""A learner's answer to a challenge: JSON text read against the challenge's fields, refused by name.

Each challenge declares its answer as `Field`s (a text, a whole number, a list of texts). `parse` reads the
JSON text and returns plain values, or raises an InputError that names what is wrong (not JSON, not an
object, a key missing or unknown, a value of the wrong type, too long, out of range) and shows the example.
`schema` writes the same fields as a JSON-schema-like description for /challenges."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from backend.runtime import json_input
from backend.runtime.errors import InputError
from backend.runtime.validation import kind

MAX_ANSWER_CHARS = 4000  # the whole JSON text; every field below is shorter
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class Field:
    """One key of an answer. `kind`: "text" (at most `hi` characters), "int" (from `lo` to `hi`) or "texts"
    (a list of `lo` to `hi` texts, each at most `max_chars`)."""
    name: str
    kind: str
    what: str
    lo: int = 1
    hi: int = 200
    max_chars: int = 200

    def schema(self) -> dict:
        if self.kind == "text":
            return {"type": "string", "minLength": 1, "maxLength": self.hi, "description": self.what}
        if self.kind == "int":
            return {"type": "integer", "minimum": self.lo, "maximum": self.hi, "description": self.what}
        return {"type": "array", "minItems": self.lo, "maxItems": self.hi, "description": self.what,
                "items": {"type": "string", "minLength": 1, "maxLength": self.max_chars}}

    def read(self, value):
        """The value, checked; an InputError naming this key otherwise."""
        if self.kind == "text":
            return _text(f"The answer's '{self.name}'", value, self.hi)
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise InputError(f"The answer's '{self.name}' must be a whole number from {self.lo} to "
                                     f"{self.hi}, got {kind(value)}.")
            if not self.lo <= value <= self.hi:
                raise InputError(f"The answer's '{self.name}' is {value}; it must be from {self.lo} to {self.hi}.")
            return value
        if not isinstance(value, list):
            raise InputError(f"The answer's '{self.name}' must be a list of texts, got {kind(value)}.")
        if not self.lo <= len(value) <= self.hi:
            raise InputError(f"The answer's '{self.name}' holds {len(value)} texts; give from {self.lo} to {self.hi}.")
        return [_text(f"The answer's '{self.name}' item {i + 1}", v, self.max_chars) for i, v in enumerate(value)]


def _text(where: str, value, max_chars: int) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where} must be text, got {kind(value)}.")
    if _LONE_SURROGATE.search(value):
        raise InputError(f"{where} holds a lone surrogate (half of a character), which no tokenizer reads: "
                         "retype it.")
    value = value.strip()
    if not value:
        raise InputError(f"{where} is empty.")
    if len(value) > max_chars:
        raise InputError(f"{where} is {len(value):,} characters long; at most {max_chars:,} are allowed.")
    return value


def schema(fields: tuple[Field, ...]) -> dict:
    return {"type": "object", "required": [f.name for f in fields], "additionalProperties": False,
            "properties": {f.name: f.schema() for f in fields}}


def parse(fields: tuple[Field, ...], answer, example: dict) -> dict:
    """{name: value} from the answer's JSON text (a dict is taken as already read)."""
    like = f"Write it like {json.dumps(example, ensure_ascii=False)}."
    if isinstance(answer, str):
        if len(answer) > MAX_ANSWER_CHARS:
            raise InputError(f"The answer is {len(answer):,} characters long; at most {MAX_ANSWER_CHARS:,} are "
                             "allowed.")
        if not answer.strip():
            raise InputError(f"The answer is empty. {like}")
        try:
            answer = json_input.loads(answer, "The answer")
        except json.JSONDecodeError as exc:
            raise InputError(f"The answer is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}). "
                             f"{like}") from None
    if not isinstance(answer, dict):
        raise InputError(f"The answer must be a JSON object, got {kind(answer)}. {like}")
    names = [f.name for f in fields]
    missing = [n for n in names if n not in answer]
    if missing:
        raise InputError(f"The answer is missing {', '.join(repr(n) for n in missing)}. {like}")
    unknown = sorted(str(k) for k in answer if k not in names)
    if unknown:
        raise InputError(f"The answer has unknown key(s) {', '.join(repr(k) for k in unknown)}; this challenge "
                         f"takes {', '.join(repr(n) for n in names)}.")
    return {f.name: f.read(answer[f.name]) for f in fields}
