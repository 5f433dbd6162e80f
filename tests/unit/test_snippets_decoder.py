"""The Pipelines snippets of the runs the local profile serves with its decoder: the instruct fallback's
summary and translation, the decoder's fill-mask. Text only here (tests/integration/test_snippets_decoder_tasks.py
runs them): each is the run itself from the packaged GGUF, never the book checkpoint's `pipeline(...)`."""

from __future__ import annotations

from backend import snippets
from backend.engines.tasks import instruct as ins
from backend.runtime import config

DECODER = {"checkpoint": config.LOCAL["summarization"].checkpoint, "source": "package", "role": "summarization"}


def _snippet(endpoint: str, inputs: dict, result: dict) -> str:
    python = snippets.for_result(endpoint, inputs, result)["python"]
    compile(python, "snippet", "exec")
    assert "pipeline(" not in python and "not this run's" not in python  # the run itself, not the book's call
    assert 'gguf_file="' in python and "find_spec(" in python  # the packaged decoder, found as the app finds it
    return python


def test_an_instruct_summary_is_the_apps_prompt_with_its_settings():
    text = "The parcel arrived late. The box was crushed."
    python = _snippet("summarize", {"text": text, "max_new_tokens": 40, "min_new_tokens": 5, "num_beams": 3},
                      {"model": {**DECODER, "method": config.METHOD_INSTRUCT}})
    assert f"messages = {ins.summary_messages(text)!r}" in python
    assert "apply_chat_template(messages, tokenize=False, add_generation_prompt=True)" in python
    for kw in ("max_new_tokens=40,", "min_new_tokens=5,", "num_beams=3,", "do_sample=False,", "repetition_penalty=1.1,"):
        assert kw in python, kw
    assert "# What the app adds:" in python and "first-three-sentences baseline" in python and "ROUGE" in python


def test_an_instruct_translation_names_the_runs_languages_and_has_no_minimum():
    python = _snippet("translate", {"text": "Hi.", "source": "en", "target": "fr", "max_new_tokens": 20, "num_beams": 0},
                      {"model": {**DECODER, "role": "translation", "method": config.METHOD_INSTRUCT},
                       "language_pair": "English -> French"})
    assert f"messages = {ins.translation_messages('Hi.', 'English', 'French')!r}" in python
    assert "max_new_tokens=20, do_sample=False" in python and "num_beams" not in python and "min_new" not in python
    assert "BLEU" in python and "generation server" not in python  # written in this process: no server note
    served = _snippet("translate", {"text": "Hi.", "source": "en", "target": "fr"},
                      {"model": {**DECODER, "role": "translation", "method": config.METHOD_INSTRUCT},
                       "language_pair": "English -> French", "engine": {"kind": "vllm", "url": "http://x"},
                       "settings": {"max_new_tokens": 120}})  # the run's settings: the endpoint's default length
    assert "written by the generation server (vllm)" in served and "http://x" not in served
    assert "max_new_tokens=120" in served


def test_the_decoders_fill_mask_reranks_the_runs_candidates():
    text = "The capital of France is [MASK]."
    python = _snippet("fill_mask", {"text": text, "top_k": 3},
                      {"model": {**DECODER, "role": "fill_mask", "method": config.METHOD_DECODER_MASK},
                       "text": text, "n_reranked": 20})
    assert f"text = {text!r}" in python and "top_k, n = 3, 20" in python
    assert "logits_to_keep=keep + 1" in python and "sentence.softmax(-1)" in python


def test_the_book_checkpoints_runs_keep_their_pipeline_call():
    book = {"checkpoint": "sshleifer/distilbart-cnn-12-6", "source": "hub", "method": "model", "role": "summarization"}
    python = snippets.for_result("summarize", {"text": "t", "max_new_tokens": 40}, {"model": book})["python"]
    assert "pipeline('summarization', model='sshleifer/distilbart-cnn-12-6')" in python
    masked = snippets.for_result("fill_mask", {"text": "a [MASK]", "top_k": 5},
                                 {"model": {**book, "checkpoint": "distilroberta-base", "role": "fill_mask"}})["python"]
    assert "pipeline('fill-mask', model='distilroberta-base')" in masked
