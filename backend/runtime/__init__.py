"""The floor of the backend: settings and config, errors, validation, the request budget, the
device and ZeroGPU wrapper, the tokenizer lock, measured rates, process-wide singletons.

Imports nothing above it (engines, hub, tabs), and no model library at import time.
"""
