"""Train a classifier in the browser (the book's chapters 2 and 9): zero-shot, feature
extraction + logistic regression, and fine-tuning, side by side on the same split, with a
learning curve; the result belongs to the caller's session.
"""

from backend.training.api import (
    CURVE_SIZES,
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
from backend.training.datasets import SHIPPED
from backend.training.use import classify_in_session, export, use_trained

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
