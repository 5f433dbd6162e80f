"""Why did the model say that? Per-token attributions and checks of them: `attribution.attribute(...)`.

`api` is the entry point (/attribute); `tasks` builds the explained quantity for each prediction
(a `targets.Target`); `methods` runs Captum's gradient x input, integrated gradients and
feature ablation (occlusion) and the attention rollout recipe; `checks` tests the scores on the
same input (completeness, deletion against random orders, agreement).
"""

from backend.why.api import EXPLANATIONS, TASKS, attribute, parse_methods
from backend.why.methods import METHODS

__all__ = ["attribute", "parse_methods", "TASKS", "METHODS", "EXPLANATIONS"]
