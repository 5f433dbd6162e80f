"""The book's chapter 1 tasks: `from backend import pipelines; pipelines.classify(...)`.

The entry points (one per api_name) take plain values and a role override, and load their
model themselves; the model-level runners they call live in `tasks` (with the shared engines:
`backend.engines.qa.extractive_qa`, `instruct`, `similarity`, `generation`).
"""

from backend.pipelines.api import (
    classify,
    fill_mask,
    generate_text,
    generate_text_stream,
    ner,
    plan,
    qa,
    runs_on_server,
    summarize,
    translate,
    zero_shot,
)
from backend.engines.classify.similarity import DEFAULT_TEMPLATE, SENTIMENT_DEFAULT
from backend.pipelines.serving import serving_methods

__all__ = [
    "classify",
    "zero_shot",
    "ner",
    "qa",
    "summarize",
    "translate",
    "fill_mask",
    "generate_text",
    "generate_text_stream",
    "runs_on_server",
    "plan",
    "serving_methods",
    "DEFAULT_TEMPLATE",
    "SENTIMENT_DEFAULT",
]
