"""The Interventions tab's backend: remove or scale heads and sub-layers, see what changes.

A tab does `from backend import interventions` and calls `interventions.intervene(...)` or
`interventions.sweep_heads(...)`, which load the role's model themselves.

Model-level pieces (unit tests hand them tiny models): `spec` (the ablation spec: parse,
check against a model), `hooks` (the hooks, and the independent edited-weights mechanism),
`effects` (what changed: KL, flips, continuations, cosine), `sweep` (rank a layer's heads).
"""

from backend.interventions.api import (EXAMPLES, MAX_NEW_TOKENS, MAX_TOKENS, MAX_TOP_K, ROLES, intervene, model_shape,
                                       sweep_heads)
from backend.interventions.spec import EXAMPLE as SPEC_EXAMPLE
from backend.interventions.spec import canonical, parse

__all__ = ["EXAMPLES", "MAX_NEW_TOKENS", "MAX_TOKENS", "MAX_TOP_K", "ROLES", "SPEC_EXAMPLE", "canonical", "intervene",
           "model_shape", "parse", "sweep_heads"]
