"""Tiny models and data for the chapter 8 compression pipeline's unit tests."""

from __future__ import annotations



from backend.engines.classify import datasets, finetune
from tests.helpers.tiny_models import tiny_bert


def tiny_teacher(layers=4, labels=6, seed=0):
    return finetune.EncoderClassifier(tiny_bert(num_hidden_layers=layers, seed=seed), labels).eval()


def tiny_dataset(n_train=24, n_eval=12) -> datasets.Dataset:
    ds = datasets.load_shipped("emotion")
    return datasets.Dataset("emotion", ds.labels, ds.train[:n_train], ds.validation[:n_eval], ds.test[:n_eval])
