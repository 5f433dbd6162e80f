"""Train a classifier in the browser (the book's chapters 2 and 9): zero-shot, feature
extraction + logistic regression, and fine-tuning, side by side on the same split, with a
learning curve; the result belongs to the caller's session.
"""

from backend.training.api import (
    METHOD_NAMES,
    METHODS,
    list_datasets,
    drop_session,
    estimate,
    load_dataset,
    predict_trained,
    session_model,
    stop,
    train,
    train_iter,
)
from backend.engines.datasets import SHIPPED
from backend.training.run_plan import CURVE_SIZES
from backend.training.use import classify_in_session, export, use_trained
from backend.hub import session_models

session_models.provide("sentiment", classify_in_session)  # "Use in Pipelines": Classify asks this first

__all__ = [
    "CURVE_SIZES",
    "METHODS",
    "METHOD_NAMES",
    "SHIPPED",
    "classify_in_session",
    "export",
    "use_trained",
    "list_datasets",
    "drop_session",
    "estimate",
    "load_dataset",
    "predict_trained",
    "session_model",
    "stop",
    "train",
    "train_iter",
]
