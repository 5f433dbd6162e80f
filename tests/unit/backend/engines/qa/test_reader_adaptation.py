"""The reader adapted to its own corpus (backend.engines.qa.adaptation, backend.hub.corpus_reader_builder) on a
tiny random BERT with the real MiniLM tokenizer and a tiny SQuAD-style fixture over real glossary passages:
the intervals, the adaptation (training, threshold on validation), the before/after table's numbers
recomputed by hand, and the cached build with its stored table."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from backend.engines.embedding.vectors import embed_texts
from backend.engines.embedding import hybrid
from backend.engines.qa import adaptation, reader, squad_metrics
from backend.engines.qa import data as qa_data
from tests.helpers.tiny_models import minilm_tokenizer, tiny_bert

GLOSSARY = [json.loads(line) for line in open(qa_data.DATA_DIR.parents[1] / "corpus" / "glossary.jsonl")][:8]


def _record(i: int, passage: dict, question: str, answer: str | None) -> dict:
    text = passage["text"]
    return {"id": f"fx-{i}", "title": passage["title"], "context": text, "question": question,
            "answers": {"text": [answer] if answer else [], "answer_start": [text.index(answer)] if answer else []}}


FIXTURE = {  # by passage: train on 0-2, validate on 3-4, test on 5-7
    "train": [(0, "In which year was the Transformer introduced?", "2017"),
              (1, "What do the weights of self-attention come from?", "the similarity between a query vector"),
              (2, "What does scaled dot-product attention divide the dot products by?", "the square root of the key dimension"),
              (2, "Who won the 2018 world cup?", None)],
    "validation": [(3, "How many learned linear layers project each token embedding?", "three"),
                   (4, "What happens to the outputs of the heads?", "concatenated and projected back"),
                   (4, "What is the capital of Peru?", None)],
    "test": [(5, "How many heads per layer does BERT-base have?", "12"),
             (6, "Which models use a causal mask?", "Decoder models such as GPT"),
             (7, "What value marks padding in the attention mask?", "0"),
             (7, "How tall is Mount Everest?", None)],
}


@pytest.fixture(scope="module")
def tok():
    return minilm_tokenizer()


@pytest.fixture(scope="module")
def splits():
    return {s: [qa_data.parse(_record(i, GLOSSARY[p], q, a)) for i, (p, q, a) in enumerate(rows)]
            for s, rows in FIXTURE.items()}


def _general(tok, seed=0):
    return reader.new_model(tiny_bert(tok.vocab_size, seed=seed), seed=seed).eval()


def test_the_intervals_are_the_statistics_modules_seeded_bootstrap_and_lenient_counts_near_misses():
    from backend.runtime import stats

    rng = np.random.default_rng(1)
    q = qa_data.parse(_record(0, GLOSSARY[0], "In which year was the Transformer introduced?", "2017"))
    none = qa_data.parse(_record(1, GLOSSARY[0], "Who won the 2018 world cup?", None))
    questions = [q] * 60 + [none] * 4
    preds = [str(rng.choice(["2017", "in 2017", "1999", ""])) for _ in range(60)] + ["", "", "", "2017"]
    got = adaptation._summary(questions, preds)
    em = [float(p == "2017") for p in preds[:60]] + [1.0, 1.0, 1.0, 0.0]
    e = stats.accuracy(em)
    assert got["exact"] == round(100 * e.value, 2) and got["exact_ci"] == [round(100 * e.lo, 2), round(100 * e.hi, 2)]
    right = [float(p in ("2017", "in 2017")) for p in preds[:60]] + [1.0, 1.0, 1.0, 0.0]
    assert got["lenient"] == round(100 * float(np.mean(right)), 2) > got["exact"]
    assert (got["refused_unanswerable"], got["unanswerable"], got["questions"]) == (3, 4, 64)
    assert got["answered_wrong"] == preds.count("1999") and got["refused_answerable"] == preds[:60].count("")
    other = [1.0 - x for x in em]
    change, lo, hi = stats.paired_difference(other, em)
    assert adaptation._difference(em, other) == {"points": round(100 * change, 2),
                                                 "ci": [round(100 * lo, 2), round(100 * hi, 2)]}


def test_lenient_is_containment_either_way_or_half_the_tokens():
    assert squad_metrics.lenient(["about four times"], "four times") == 1
    assert squad_metrics.lenient(["four times"], "It reduces model size about four times") == 1
    assert squad_metrics.lenient(["the square root of the key dimension"], "square root of the key") == 1
    assert squad_metrics.lenient(["2017"], "2018") == 0 and squad_metrics.lenient(["2017"], "") == 0
    assert squad_metrics.lenient([], "") == 1 and squad_metrics.lenient([], "2017") == 0
    assert squad_metrics.lenient(["the"], "a") == 0  # nothing left after normalising: not a containment


def test_adaptation_trains_every_step_and_takes_its_threshold_from_validation(tok, splits):
    model = _general(tok)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    info = adaptation.adapt(model, tok, splits["train"], splits["validation"])
    assert info["steps"] == info["total_steps"] == adaptation.RECIPE_SETTINGS.epochs  # 4 questions: one batch an epoch
    assert any(not np.allclose(before[k].numpy(), v.numpy()) for k, v in model.state_dict().items())
    best = reader.evaluate(model, tok, splits["validation"], threshold=0.0)["best_threshold"]
    assert model.config.null_threshold == best and info["null_threshold"] == round(best, 4)
    again = reader.evaluate(model, tok, splits["validation"])  # the config's threshold is the one served
    assert info["validation"]["exact"] == round(again["metrics"]["exact"], 2)
    assert info["sizes"] == {"train": 4, "validation": 3} and info["unanswerable"] == {"train": 1, "validation": 1}


def test_the_end_to_end_threshold_is_the_best_for_the_retriever_reader_rule(tok, splits):
    model = _general(tok, 3)
    val = splits["validation"]
    retrieved = [[q.context, GLOSSARY[0]["text"], GLOSSARY[6]["text"]] for q in val]
    t = adaptation.end_to_end_threshold(model, tok, val, retrieved)

    def f1_at(threshold: float) -> float:  # the rule Ask applies, read again at each threshold
        total = 0.0
        for q, texts in zip(val, retrieved):
            top, _ = reader.read_passages(model, tok, q.question, texts,
                                          lambda qq, text: reader.answer(model, tok, qq, text, top_n=1, threshold=threshold))
            total += squad_metrics.score(list(q.answers), top["answer"] if top else "")[1]
        return total

    margins = sorted({reader.answer(model, tok, q.question, x, top_n=1, threshold=-1e9)["margin"]
                      for q, texts in zip(val, retrieved) for x in texts})
    assert f1_at(t) >= max(f1_at(m) for m in [margins[0] - 1] + margins[::3]) - 1e-9
    info = adaptation.adapt(model, tok, splits["train"], val, retrieved=retrieved)
    assert info["threshold_chosen_on"] == "top 3 retrieved"
    assert model.config.null_threshold == adaptation.end_to_end_threshold(model, tok, val, retrieved)


def test_the_table_is_what_the_readers_and_the_retriever_do_on_the_test_split(tok, splits):
    general, adapted = _general(tok, 0), _general(tok, 1)
    general.config.null_threshold, adapted.config.null_threshold = -1e9, 0.0  # one always answers
    encoder = tiny_bert(tok.vocab_size, seed=2)
    embed = lambda texts: embed_texts(texts, encoder, tok)  # noqa: E731
    test = splits["test"]
    t = adaptation.chapter7_table(general, adapted, tok, test, GLOSSARY, embed)
    assert (t["questions"], t["answerable"], t["unanswerable"], t["test_passages"]) == (4, 3, 1, 3)
    readers = {r["name"]: r for r in t["readers"]}
    ems = {}
    for name, model in (("general", general), ("adapted", adapted)):
        said = [reader.answer(model, tok, q.question, q.context, top_n=1) for q in test]
        preds = ["" if o["no_answer"] else o["answers"][0]["answer"] for o in said]
        ems[name] = [squad_metrics.score(list(q.answers), p)[0] for q, p in zip(test, preds)]
        want = squad_metrics.evaluate([list(q.answers) for q in test], preds)
        got = readers[name]["on_gold"]
        assert got["exact"] == round(want["exact"], 2) and got["f1"] == round(want["f1"], 2) and got["questions"] == 4
        assert got["exact_ci"][0] <= got["exact"] <= got["exact_ci"][1]
    assert ems["general"][-1] == 0  # the always-answering reader is wrong on the unanswerable question
    diff = t["difference"]["on_gold"]["exact"]
    assert diff["points"] == pytest.approx(readers["adapted"]["on_gold"]["exact"] - readers["general"]["on_gold"]["exact"],
                                           abs=0.02)
    # the retriever as Ask's: "title: text" embedded, the (here all 8) dense candidates re-ranked with BM25
    docs = [f"{p['title']}: {p['text']}" for p in GLOSSARY]
    vectors, queries = embed(docs), embed([q.question for q in test[:3]])
    bm25, gold, orders = hybrid.Bm25(docs), [5, 6, 7], []
    for q, v in zip(test[:3], queries):
        dense = np.argsort(-(vectors @ v), kind="stable")
        fused = hybrid.fuse((vectors @ v)[dense], bm25.scores(q.question)[dense])
        orders.append(list(dense[np.argsort(-fused, kind="stable")]))
    for row in t["recall"]:
        hits = [g in order[:row["k"]] for g, order in zip(gold, orders)]
        assert row["recall"] == round(100 * np.mean(hits), 2) and row["questions"] == 3
    assert t["recall"][-1]["recall"] == 100.0  # 8 passages, k = 10: every gold passage is retrieved
    one = [r for r in readers["general"]["end_to_end"] if r["k"] == 1][0]
    assert 0 <= one["exact"] <= 100 and one["questions"] == 4


def test_the_build_saves_the_adapted_reader_and_its_table_once(tok, splits, tmp_path, monkeypatch):
    from backend.hub import corpus_reader_builder as built

    data = tmp_path / "glossary_qa"
    data.mkdir()
    for s, rows in FIXTURE.items():
        (data / f"{s}.jsonl").write_text("".join(json.dumps(_record(i, GLOSSARY[p], q, a)) + "\n"
                                                 for i, (p, q, a) in enumerate(rows)))
    corpus = tmp_path / "glossary.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in GLOSSARY))
    monkeypatch.setattr(qa_data, "GLOSSARY_DIR", data)
    monkeypatch.setattr(built, "_glossary_path", lambda: corpus)
    general_folder = tmp_path / "general"
    _general(tok).save_pretrained(general_folder)
    tok.save_pretrained(general_folder)
    embedder = SimpleNamespace(model=tiny_bert(tok.vocab_size, seed=2), tokenizer=tok, checkpoint="tiny-embedder")
    root = tmp_path / "cache"
    calls = []

    def make(tmp):
        calls.append(tmp)
        return built._saved(tmp, *built.train(general_folder, embedder))

    folder, meta = built.BUILD.ensure_model(general_folder, root, make)
    assert not meta["cached"] and folder.name.startswith(built.RECIPE)
    t = built.table(folder)
    assert t["questions"] == 4 and t["retriever"] == "tiny-embedder" and t["general_reader"] == "general"
    assert t["adaptation"]["sizes"] == {"train": 4, "validation": 3} and t["build_s"] > 0
    model, _ = built.serve(folder)
    assert model.config.null_threshold == meta["null_threshold"] == t["null_threshold"]
    _, again = built.BUILD.ensure_model(general_folder, root, make)
    assert again["cached"] and len(calls) == 1  # built once
    (data / "test.jsonl").write_text((data / "test.jsonl").read_text().replace("How many", "How many attention"))
    assert built.BUILD.folder(general_folder, root) != folder  # new questions: a new key


def test_ask_reads_with_the_general_reader_and_says_so_where_set_up_did_not_build_the_adapted_one(tok, monkeypatch,
                                                                                                tmp_path):
    from backend.hub import corpus_reader_builder as built
    from backend.search import adapted

    general = SimpleNamespace(model=_general(tok), tokenizer=tok, device="cpu", checkpoint="tiny",
                              describe=lambda: {"checkpoint": "tiny", "method": "fine-tuned"})
    monkeypatch.setattr(adapted, "_base_location", lambda: tmp_path)
    monkeypatch.setattr(built, "cached", lambda location, root=None: None)
    model, tokenizer, about, notice = adapted.adapted_reader(general)
    assert model is general.model and about["checkpoint"] == "tiny" and notice == adapted.NOT_BUILT
    assert "python -m backend.hub build" in notice and adapted.stored_table() is None
