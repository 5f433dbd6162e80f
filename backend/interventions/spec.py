"""The ablation spec: what to change in the model, written the way a learner types it.

    "L2H3=0, L5H1*0.5, L3.mlp=0, L4.attn=0, L1H*=0"

- `L<layer>H<head>=0` zeroes one head's output (its slice of the concatenated heads that the
  attention's output projection reads); `*s` scales it by s instead.
- `L<layer>H*` is every head of that layer.
- `L<layer>.mlp` / `L<layer>.attn` is the whole MLP / attention sub-layer: `=0` makes it add
  nothing to the residual stream, `*s` scales what it adds.

Layers and heads count from 0. Items are separated by commas, semicolons or new lines; a
list of such strings works too (an API caller's JSON list). `parse` reads the text alone;
`resolve` checks it against one model's layers and heads and expands `H*`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from backend.runtime.validation import kind
from backend.runtime.errors import InputError

MAX_CHARS = 2_000
MAX_ITEMS = 64
MAX_SCALE = 100.0
ALL = -1  # `H*`: every head of the layer
PARTS = ("head", "attn", "mlp")

_ITEM = re.compile(
    r"^L(?P<layer>\d+)\s*(?:H\s*(?P<head>\d+|\*)|\.\s*(?P<part>mlp|attn|attention|ffn))\s*"
    r"(?:(?P<op>[=*x×])\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?))?$",
    re.IGNORECASE,
)
EXAMPLE = "L2H3=0, L5H1*0.5, L3.mlp=0"


@dataclass(frozen=True)
class Edit:
    """One change: `part` of `layer` (for "head": head `head`, or ALL) times `scale` (0 = removed)."""

    layer: int
    part: str
    head: int | None = None
    scale: float = 0.0

    @property
    def target(self) -> str:
        if self.part == "head":
            return f"L{self.layer}H{'*' if self.head == ALL else self.head}"
        return f"L{self.layer}.{self.part}"

    @property
    def label(self) -> str:
        return f"{self.target}=0" if self.scale == 0 else f"{self.target}*{self.scale:g}"

    def as_dict(self) -> dict:
        return {"layer": self.layer, "part": self.part, "head": self.head, "scale": self.scale, "label": self.label}


def _items(spec) -> list[str]:
    if spec is None:
        return []
    if isinstance(spec, (list, tuple)):
        if not all(isinstance(s, str) for s in spec):
            raise InputError("spec must be text like 'L2H3=0, L3.mlp=0' (or a list of such strings).")
        spec = ",".join(spec)
    if not isinstance(spec, str):
        raise InputError(f"spec must be text like '{EXAMPLE}', got {kind(spec)}.")
    if len(spec) > MAX_CHARS:
        raise InputError(f"spec is {len(spec):,} characters long; at most {MAX_CHARS:,} are allowed.")
    return [s.strip() for s in re.split(r"[,;\n]+", spec.strip().strip("[]")) if s.strip().strip("'\"")]


def _scale(item: str, op: str | None, value: str | None) -> float:
    if op is None:
        return 0.0  # "L2H3" alone: remove it
    scale = float(value)
    if not math.isfinite(scale) or abs(scale) > MAX_SCALE:
        raise InputError(f"'{item}': the factor must be a finite number between -{MAX_SCALE:g} and {MAX_SCALE:g}.")
    if op == "=" and scale != 0:
        raise InputError(f"'{item}': '=' only sets to 0 (removes); to scale, write '*{scale:g}'.")
    return scale


def parse(spec) -> list[Edit]:
    """The edits a spec names, in order (no model needed). Empty -> [] (the model unchanged)."""
    edits: list[Edit] = []
    for raw in _items(spec):
        item = raw.strip("'\"").strip()
        m = _ITEM.match(item)
        if m is None:
            raise InputError(
                f"Cannot read '{item[:40]}' in the spec: write L<layer>H<head>=0 (remove a head), "
                f"L<layer>H<head>*0.5 (scale it), L<layer>H*=0 (every head), L<layer>.mlp=0 or "
                f"L<layer>.attn=0 (a whole sub-layer); e.g. '{EXAMPLE}'. Layers and heads count from 0.")
        scale = _scale(item, m["op"], m["value"])
        layer = int(m["layer"])
        if m["head"] is not None:
            head = ALL if m["head"] == "*" else int(m["head"])
            edits.append(Edit(layer, "head", head, scale))
        else:
            part = {"attention": "attn", "ffn": "mlp"}.get(m["part"].lower(), m["part"].lower())
            edits.append(Edit(layer, part, None, scale))
    if len(edits) > MAX_ITEMS:
        raise InputError(f"The spec has {len(edits)} items; at most {MAX_ITEMS} (use L<layer>H* for a whole layer).")
    return edits


def resolve(edits: list[Edit], n_layers: int, n_heads: int) -> list[Edit]:
    """Check every edit against a model with `n_layers` x `n_heads`, expand `H*`, refuse doubles."""
    out: list[Edit] = []
    seen: dict[tuple, str] = {}
    for e in edits:
        if not 0 <= e.layer < n_layers:
            raise InputError(f"'{e.label}': layer {e.layer} does not exist; this model has layers 0 to {n_layers - 1}.")
        if e.part == "head" and e.head != ALL and not 0 <= e.head < n_heads:
            raise InputError(f"'{e.label}': head {e.head} does not exist; each layer has heads 0 to {n_heads - 1}.")
        heads = range(n_heads) if e.head == ALL else [e.head]
        expanded = [Edit(e.layer, "head", h, e.scale) for h in heads] if e.part == "head" else [e]
        for x in expanded:
            key = (x.layer, x.part, x.head)
            if key in seen:
                raise InputError(f"'{e.label}' changes {x.target} again (already changed by '{seen[key]}'): "
                                 "name each head or sub-layer once.")
            seen[key] = e.label
            out.append(x)
    return out


def canonical(edits: list[Edit]) -> str:
    """The spec as it was understood, one way of writing it (shown next to every result)."""
    return ", ".join(e.label for e in edits)
