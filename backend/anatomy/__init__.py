"""The Anatomy tab's backend: a tab does `from backend import anatomy` and calls
`anatomy.anatomy(...)`, which loads the role's model itself.

Model-level pieces (unit tests pass them tiny models): `scratch` (the pass and the
comparison), the recipes `bert`, `llama`, `gpt2` (built from `ops`), `stream`, `lens`,
`pooling`, `parameters` (the parameter budget).
"""

from backend.anatomy.api import FIRST_EXAMPLE, MAX_TOKENS, ROLES, TOLERANCE, anatomy

__all__ = ["FIRST_EXAMPLE", "MAX_TOKENS", "ROLES", "TOLERANCE", "anatomy"]
