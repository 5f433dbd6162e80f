"""Stop within 5 s for every training: no validation pass and no final test or validation scoring runs
after Stop (with them, fine-tuning takes 9.2 s to stop, 40 s on a loaded box).

Not a wall-clock test: each case counts the model's forward passes (one per batch) after the moment
Stop is pressed, from a forward hook that presses it in the middle of a training chunk or of a
scoring pass. At most one batch may follow (the one in flight), not a whole validation pass (several
batches) and the test pass.
"""

from __future__ import annotations

import threading
import zipfile

import pytest
import torch

from backend import scratch
from backend.engines.classify import finetune as FT
from backend.engines.ner import token_classification as tc
from backend.runtime import stops
from backend.scratch import gpt_store, seq2seq_store
from backend.train import api, gpu, ner_api, use
from backend.train import store as train_store
from backend.train.store import TrainStore
from components.train.ui import accuracy_text, summary_markdown
from tests.helpers.tiny_models import minilm_tokenizer, save_tiny, tiny_bert
from tests.helpers.train_timing import drain

WORDS = "good great lovely happy nice fun bad awful terrible sad poor mess".split()


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny(tiny_bert(seed=0), minilm_tokenizer(), tmp_path_factory.mktemp("tiny_stop_embedder"))


@pytest.fixture
def tiny(monkeypatch, tiny_dir):
    monkeypatch.setenv("TLAB_MODEL_EMBEDDER", str(tiny_dir))
    monkeypatch.setattr(train_store.STORE, "_value", TrainStore())
    gpt_store.STORE.set(None)
    seq2seq_store.STORE.set(None)
    yield tiny_dir
    gpt_store.STORE.set(None)
    seq2seq_store.STORE.set(None)


class StopAt:
    """A global forward hook: counts the forwards of `kinds` (training or eval ones, as asked), presses
    Stop (`press()`) just before the `at`-th of them runs, and counts how many start after that."""

    def __init__(self, kinds: tuple, at: int, training: bool, press):
        self.kinds, self.at, self.training, self.press = kinds, at, training, press
        self.seen = self.total = 0
        self.pressed_at = None

    def __call__(self, module, args):
        if not isinstance(module, self.kinds):
            return
        self.total += 1
        if torch.is_grad_enabled() == self.training:  # a training step runs with gradients, scoring without
            self.seen += 1
            if self.seen == self.at and self.pressed_at is None:
                self.press()
                self.pressed_at = self.total  # this forward is the batch in flight

    @property
    def after(self) -> int:
        assert self.pressed_at is not None, "Stop was never pressed: the run did not get that far"
        return self.total - self.pressed_at

    def __enter__(self):
        self.handle = torch.nn.modules.module.register_module_forward_pre_hook(self)
        return self

    def __exit__(self, *exc):
        self.handle.remove()


def _rows(n: int, seed: int = 0) -> list[tuple[str, int]]:
    import random

    rng = random.Random(seed)
    return [(" ".join(rng.choice(WORDS) for _ in range(6)), i % 2) for i in range(n)]


# ----------------------------------------------------------------------------- fine-tuning's loop
def test_stop_mid_epoch_during_a_chunk_runs_no_more_steps_and_no_validation(tiny):
    """64 examples of 4 a batch: 16 steps an epoch; Stop at the 5th step (inside the second chunk, which
    would run the rest of the epoch), then no step and no validation pass (200 texts: 4 batches)."""
    stop = threading.Event()
    budget = FT.Budget(epochs=3, max_seconds=3600, batch_size=4, learning_rate=1e-3)
    with StopAt((FT.EncoderClassifier,), at=5, training=True, press=stop.set) as hook:
        events, out = drain(FT.run(_rows(64), _rows(200, 1), 2, budget, gpu.HubWorker(), stop))
    assert hook.after <= 1, f"{hook.after} forwards after Stop"
    assert out.stopped == "stopped" and out.steps == 5 < 16  # mid-epoch, inside a chunk of 14 steps
    assert out.epochs == [] and out.best_val is None and out.weights is not None  # the state so far, unscored
    assert not [e for e in events if e["event"] == "epoch"]
    assert stops._FLAGS == {}  # every name handed to a chunk is gone


def test_stop_during_a_validation_pass_abandons_it_within_one_batch(tiny):
    stop = threading.Event()
    budget = FT.Budget(epochs=3, max_seconds=3600, batch_size=4, learning_rate=1e-3)
    with StopAt((FT.EncoderClassifier,), at=2, training=False, press=stop.set) as hook:
        _, out = drain(FT.run(_rows(64), _rows(200, 1), 2, budget, gpu.HubWorker(), stop))
    assert hook.after <= 1, f"{hook.after} forwards after Stop"
    assert out.stopped == "stopped" and out.steps == 16  # the first epoch, then its validation was cut short
    assert out.epochs == [] and out.best_val is None and out.weights is not None


# ----------------------------------------------------------------------------- the /train entry point
def test_stop_during_the_final_scoring_skips_the_test_pass_and_says_so(tiny, tmp_path):
    """Emotion (its validation and test splits: 2 batches each), fine-tuning only: Stop at the first test
    batch. Nothing but that batch runs; the result says the test pass was skipped; the model is kept."""
    with StopAt((FT.EncoderClassifier,), at=3, training=False, press=lambda: api.stop("s")) as hook:
        r = api.train("s", "emotion", methods="finetune", epochs=1, max_examples=24, batch_size=8,
                      max_seconds=600, learning_rate=1e-3, learning_curve=False)
    assert hook.after <= 1, f"{hook.after} forwards after Stop"
    ft = r["methods"]["finetune"]
    assert ft["test_skipped"] is True and "accuracy" not in ft and "test pass was skipped" in ft["note"]
    assert ft["best_validation"] is not None and "map_finetuned" not in r  # trained, validated, not tested
    assert r["best_method"] == "finetune"  # the only model there is: kept and in use, without a test score
    p = api.predict_trained("s", "a lovely happy day", method="finetune")
    assert p["method"] == "finetune" and p["model"]["test_accuracy"] is None
    # The tab says so wherever it shows a test score: the summary, a prediction, the download's note.
    assert "test pass skipped after Stop" in summary_markdown(r)
    assert accuracy_text(p["model"]["test_accuracy"]) == "not measured (stopped before the test pass)"
    with zipfile.ZipFile(use.export("s", "finetune", root=tmp_path)["path"]) as z:
        card = z.read(next(n for n in z.namelist() if n.endswith("README.md"))).decode()
    assert "Test score:** not measured: its training was stopped before the test pass." in card


def test_stop_during_training_skips_the_test_pass(tiny):
    with StopAt((FT.EncoderClassifier,), at=2, training=True, press=lambda: api.stop("t")) as hook:
        r = api.train("t", "emotion", methods="probe,finetune", epochs=2, max_examples=64, batch_size=4,
                      max_seconds=600, learning_rate=1e-3, learning_curve=True, curve_finetune=True)
    assert hook.after <= 1, f"{hook.after} forwards after Stop"
    ft = r["methods"]["finetune"]
    assert ft["stopped"] == "stopped" and ft["test_skipped"] and ft["best_validation"] is None
    assert r["best_method"] == "probe"  # the scored one
    assert "learning_curve" not in r and "Stopped: the learning curve did not run." in r["notes"]


# ----------------------------------------------------------------------------- NER
def test_ner_stop_during_a_validation_pass_abandons_it_and_skips_scoring(tiny):
    """16 sentences of 8: 2 steps; the epoch's validation (105 sentences: 2 batches) is where Stop lands.
    The pass must not go on, nor validation and test be scored again (4 more batches)."""
    with StopAt((tc.TokenClassifier,), at=1, training=False, press=lambda: api.stop("n")) as hook:
        events = list(ner_api.train_iter("n", epochs=1, max_sentences=16, batch_size=8, learning_rate=1e-3))
    assert hook.after <= 1, f"{hook.after} forwards after Stop"
    r = events[-1]["result"]
    assert r["stopped"] and "test pass was skipped" in r["note"] and "test" not in r
    assert not train_store.get_store().session("n").running


# ----------------------------------------------------------------------------- from scratch
def test_tiny_gpt_stop_mid_chunk_runs_no_more_steps_and_no_final_validation(tiny):
    from transformers import GPT2LMHeadModel

    text = "the cat sat on the mat. the dog sat on the log. " * 60
    with StopAt((GPT2LMHeadModel,), at=8, training=True, press=lambda: scratch.stop_gpt("g")) as hook:
        events = list(scratch.train_gpt_iter("g", corpus="paste", text=text, layers=1, heads=2, width=32,
                                             context=16, batch=8, eval_every=5, steps=200))
    assert hook.after <= 1, f"{hook.after} forwards after Stop"  # before: the step's chunk, then 1 + 80 sampled
    r = events[-1]["result"]
    assert r["stopped"] == "stopped" and r["steps_run"] == 8 and r["final"]["val_step"] == 5


def test_seq2seq_stop_mid_chunk_skips_the_final_validation_and_the_test(tiny):
    from transformers import BartForConditionalGeneration

    with StopAt((BartForConditionalGeneration,), at=8, training=True,
                press=lambda: scratch.stop_seq2seq("q")) as hook:
        events = list(scratch.train_seq2seq_iter("q", steps=200, layers=1, heads=2, width=32, batch=32,
                                                 eval_every=10))
    assert hook.after <= 1, f"{hook.after} forwards after Stop"
    r = events[-1]["result"]
    assert r["stopped"] == "stopped" and r["steps_run"] == 8 and r["test"] is None
    assert r["final"]["val_step"] == 0 and seq2seq_store.get_store().trained("q") is not None
