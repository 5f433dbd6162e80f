"""Train a classifier in the browser (the book's chapters 2 and 9): zero-shot, feature
extraction + logistic regression, and fine-tuning, side by side on the same split, with a
learning curve; and a token classifier (NER, chapter 4). The result belongs to the caller's session.
"""

from backend.train.api import (
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
from backend.engines.classify.datasets import SHIPPED
from backend.train.run_plan import CURVE_SIZES
from backend.train.use import classify_in_session, export, use_trained
from backend.train import ner_api, ner_use
from backend.train.ner_api import estimate as estimate_ner, train as train_ner, train_iter as train_ner_iter
from backend.train.ner_use import export as export_ner, predict as predict_ner
from backend.hub import session_models

session_models.provide("sentiment", classify_in_session)  # "Use in Pipelines": Classify asks this first
from backend.train import why_model  # noqa: E402

session_models.provide("why-classifier", why_model.classifier)  # the Why tab explains this session's classifier

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
    "estimate_ner",
    "export_ner",
    "ner_api",
    "ner_use",
    "predict_ner",
    "train_ner",
    "train_ner_iter",
    "load_dataset",
    "predict_trained",
    "session_model",
    "stop",
    "train",
    "train_iter",
]
