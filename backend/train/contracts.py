"""The Train tab's contracts (backend/runtime/contract.py). Training stops at its own `max_seconds` and at the
request's budget between batches, so its price is one batch's time (`stoppable`), from the batch size."""

from __future__ import annotations

from backend.engines.classify.datasets import MAX_ROWS
from backend.engines.ner.data import MAX_SENTENCES
from backend.runtime import speeds
from backend.runtime.contract import SMALL, Contract, Cost, Flag, Free, Int, Many, Num, Text, Upload
from backend.runtime.config import public_mode
from backend.train.api import MAX_SECONDS, MAX_SECONDS_PUBLIC, METHODS
from backend.train.ner_api import max_epochs

BATCH_TOKENS = 64  # a training sentence, padded, at most (the shipped sets' sentences are 10-40 tokens)


def _training(batch_size, what: str) -> Cost:
    batch = int(batch_size or 16)
    step = speeds.seconds("encoder_train_tokens", batch * BATCH_TOKENS)
    return Cost(mb=300 + batch * 6, s=step, stoppable=True, step_s=step, what=what,
                ask="Use a smaller batch size.")


SEED = Int(0, 2**31 - 1, optional=True)
CONTRACTS = {
    "train": Contract({"dataset": Free(100), "file": Upload(), "text_column": Free(200), "label_column": Free(200),
                       "methods": Many(METHODS, max_items=len(METHODS)), "epochs": Int(1, 20),
                       "max_examples": Int(8, MAX_ROWS), "max_seconds": Num(1, lambda: MAX_SECONDS_PUBLIC if public_mode() else MAX_SECONDS),
                       "learning_rate": Num(1e-7, 1e-2), "batch_size": Int(2, 128), "learning_curve": Flag(),
                       "curve_finetune": Flag(), "seed": SEED},
                      lambda v: _training(v.get("batch_size"), "this training run")),
    "predict_trained": Contract({"text": Text("text"), "method": Free(100)},
                                lambda v: Cost(mb=64, s=0.5 + speeds.seconds("encoder_tokens", len(v.get("text") or "")))),
    "use_trained": Contract({"on": Flag(), "method": Free(100)}, SMALL),
    "download_trained": Contract({"method": Free(100)}, Cost(mb=200, s=5, what="writing the classifier's zip")),
    "train_ner": Contract({"source": Free(100), "file": Upload(), "epochs": Int(1, max_epochs),
                           "max_sentences": Int(0, MAX_SENTENCES, optional=True), "learning_rate": Num(1e-7, 1e-2, True),
                           "batch_size": Int(2, 64), "word_shapes": Flag(), "seed": SEED},
                          lambda v: _training(v.get("batch_size"), "this NER training run")),
    "predict_ner": Contract({"text": Text("text")},
                            lambda v: Cost(mb=64, s=0.5 + speeds.seconds("encoder_tokens", len(v.get("text") or "")))),
    "download_ner": Contract({}, Cost(mb=200, s=5, what="writing the NER model's zip")),
}
