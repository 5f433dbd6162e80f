"""Chapter 7's last step: the reader trained on general questions, fine-tuned on questions from its own
corpus (the book: a SQuAD reader, then SubjQA), and the retriever-reader measured before and after.

`adapt` fine-tunes the general reader (handed in: the offline `qa` reader, trained on assets/data/qa) on the
glossary's train split (assets/data/glossary_qa, written blind and split by passage, so no test passage is
trained on), with one retrieved-but-wrong passage per question as a "no answer" example (`hard_negatives`),
and chooses on the validation split, end to end over the retrieved passages, its no-answer threshold, its rank
penalty and how many of the retrieved passages it reads (`end_to_end_rule`). `chapter7_table` measures, on the
test split, the general and the adapted reader on each question's own passage (SQuAD EM and F1, and a lenient
"right" rate), the retriever's recall@k over the glossary corpus, and the retriever-reader end to end (each
reader over the top k retrieved passages, by its own rule), every figure with a seeded percentile bootstrap
interval over the questions (backend.runtime.stats); a question's passages are read in shared forwards. It
runs once, at set-up (backend/hub/corpus_reader_builder.py), and is stored with the model: the page shows the
stored figures.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Callable

import numpy as np

from backend.engines.embedding import hybrid
from backend.engines.qa import reader, squad_metrics
from backend.engines.qa.data import Example
from backend.runtime import stats

RECIPE_SETTINGS = reader.Recipe(epochs=2, batch_size=16, learning_rate=6e-5, warmup=0.1)
RECALL_K = (1, 3, 5, 10)
END_TO_END_K = (1, 5)  # Ask the corpus reads up to 5 passages
RANK_PENALTIES = (0.0, 1.0, 2.0, 3.0, 4.0)  # logit points a passage's span loses per place below the first
READ_DEPTHS = (1, 2, 3, 5)  # how many of the retrieved passages the reader may answer from
HARD_NEGATIVES = 1  # retrieved-but-wrong passages per training question, trained on as "no answer"
BOOTSTRAP = {"resamples": stats.RESAMPLES, "seed": stats.SEED, "level": stats.LEVEL}


def _summary(questions: list[Example], preds: list[str]) -> dict:
    """EM, F1 and the lenient "right" rate in % with their intervals (backend.runtime.stats: the seeded
    bootstrap), how many unanswerable questions were refused and answerable ones answered wrongly, and n."""
    em, f1, right = _columns(questions, preds)
    pct = lambda xs: [round(100 * x, 2) for x in stats.bootstrap(xs, _mean)]  # noqa: E731
    mean = lambda xs: round(100 * float(np.mean(xs)), 2) if xs else 0.0  # noqa: E731
    unanswerable = [p for q, p in zip(questions, preds) if not q.answerable]
    answered = [(q, p) for q, p in zip(questions, preds) if q.answerable and p]
    return {"exact": mean(em), "exact_ci": pct(em), "f1": mean(f1), "f1_ci": pct(f1), "lenient": mean(right),
            "lenient_ci": pct(right), "refused_unanswerable": sum(p == "" for p in unanswerable),
            "unanswerable": len(unanswerable), "answered_wrong": sum(not squad_metrics.lenient(list(q.answers), p)
                                                                    for q, p in answered),
            "refused_answerable": sum(q.answerable and not p for q, p in zip(questions, preds)),
            "questions": len(em)}


def _columns(questions: list[Example], preds: list[str]) -> tuple[list[float], list[float], list[float]]:
    """Per question: exact match, F1, lenient right (squad_metrics.lenient)."""
    scored = [(*squad_metrics.score(list(q.answers), p), squad_metrics.lenient(list(q.answers), p))
              for q, p in zip(questions, preds)]
    return [float(e) for e, _, _ in scored], [float(f) for _, f, _ in scored], [float(r) for _, _, r in scored]


def _mean(x: np.ndarray) -> np.ndarray:
    return x.mean(axis=-1)


def _difference(a: list[float], b: list[float]) -> dict:
    """b - a per question (the same questions, resampled together), in points, with its interval."""
    change, lo, hi = stats.paired_difference(b, a)
    return {"points": round(100 * change, 2), "ci": [round(100 * lo, 2), round(100 * hi, 2)]}


def adapt(model, tokenizer, train: list[Example], validation: list[Example],
          recipe: reader.Recipe = RECIPE_SETTINGS, progress: Callable[[int, int, float], None] | None = None,
          retrieved: list[list[str]] | None = None, negatives: list[Example] = ()) -> dict:
    """Fine-tune the general reader `model` in place on `train` (and `negatives`: `hard_negatives`), then
    choose its no-answer threshold on `validation` (saved in its config, as the general reader's is): where `retrieved` gives each validation
    question's retrieved passages (the texts Ask the corpus would read), the threshold that maximises F1 end
    to end over them, with the rank penalty (`end_to_end_rule`); else the one that maximises F1 on each question's own passage.
    -> what was done, and the validation metrics on the questions' own passages at the chosen threshold."""
    info = reader.train(model, tokenizer, train + list(negatives), recipe, progress)
    at_zero = reader.evaluate(model, tokenizer, validation, threshold=0.0)
    threshold, penalty, depth = ((at_zero["best_threshold"], 0.0, None) if retrieved is None
                                 else end_to_end_rule(model, tokenizer, validation, retrieved))
    model.config.null_threshold, model.config.rank_penalty, model.config.read_depth = threshold, penalty, depth
    tuned = reader.evaluate(model, tokenizer, validation, threshold=threshold)
    end_to_end = None
    if retrieved is not None:  # what Ask does on validation with the chosen rule (chosen there: optimistic)
        end_to_end = _summary(validation, [(top["answer"] if (top := reader.read_passages(
            model, tokenizer, q.question, texts)[0]) else "") for q, texts in zip(validation, retrieved)])
    return {**info, "null_threshold": round(threshold, 4), "rank_penalty": penalty, "read_depth": depth,
            "hard_negatives": len(negatives),
            "threshold_chosen_on": "own passage" if retrieved is None else f"top {len(retrieved[0])} retrieved",
            "validation": {k: (round(v, 2) if isinstance(v, float) else v) for k, v in tuned["metrics"].items()},
            "validation_end_to_end": end_to_end,
            "sizes": {"train": len(train), "validation": len(validation)},
            "unanswerable": {"train": sum(not e.answerable for e in train),
                             "validation": sum(not e.answerable for e in validation)}}


def end_to_end_rule(model, tokenizer, questions: list[Example], retrieved: list[list[str]],
                    penalties: tuple[float, ...] = RANK_PENALTIES, depths: tuple[int, ...] | None = None
                    ) -> tuple[float, float, int]:
    """(margin threshold, rank penalty, depth) that maximise total F1 of the retriever-reader rule
    (reader.read_passages: over the first `depth` retrieved passages, the best span, less the penalty per
    place below the first passage, among the passages whose margin passes the threshold, else no answer) over
    each question's retrieved passages (the SQuAD 2.0 best-threshold search, with the reader reading several
    passages); ties go to the smaller depth, then the smaller penalty, then the smaller threshold."""
    reads = _Reads(model, tokenizer)
    spans = []  # per question: (logit, margin, answer, place) of each retrieved passage's best span
    for q, texts in zip(questions, retrieved):
        reads.prefetch(q.question, texts)
        outs = [reads(q.question, t) for t in texts]
        spans.append([(o["answers"][0]["logit"], o["margin"], o["answers"][0]["answer"], i)
                      for i, o in enumerate(outs) if o["answers"] and o["margin"] is not None])
    most = max((len(t) for t in retrieved), default=1)
    depths = tuple(d for d in (depths or READ_DEPTHS) if d < most) + (most,)

    def total_f1(t: float, penalty: float, depth: int) -> float:
        preds = [max(kept, key=lambda x: x[0] - penalty * x[3])[2]
                 if (kept := [x for x in c if x[1] > t and x[3] < depth]) else "" for c in spans]
        return sum(squad_metrics.score(list(q.answers), p)[1] for q, p in zip(questions, preds))

    cands = sorted({round(x[1], 4) for c in spans for x in c})
    best_t, best_p, best_d, best = 0.0, 0.0, most, -1.0
    for depth in depths:
        for penalty in (penalties if depth > 1 else (0.0,)):
            for t in [min(cands, default=0.0) - 1.0] + cands:
                f = total_f1(t, penalty, depth)
                if f > best + 1e-9:
                    best_t, best_p, best_d, best = t, penalty, depth, f
    return float(best_t), float(best_p), int(best_d)


def end_to_end_threshold(model, tokenizer, questions: list[Example], retrieved: list[list[str]]) -> float:
    """The margin threshold alone (no rank penalty): `end_to_end_rule` with the reader's plain rule."""
    return end_to_end_rule(model, tokenizer, questions, retrieved, (0.0,), (max(map(len, retrieved)),))[0]


class _Reads:
    """Each (question, passage) read once per reader: the gold passage and the top 1 and 5 overlap."""

    def __init__(self, model, tokenizer):
        self.model, self.tokenizer, self.memo = model, tokenizer, {}

    def __call__(self, question: str, text: str) -> dict:
        if (question, text) not in self.memo:
            self.memo[(question, text)] = reader.answer(self.model, self.tokenizer, question, text, top_n=1)
        return self.memo[(question, text)]

    def prefetch(self, question: str, texts: list[str]) -> None:
        """Read the passages not read yet for `question` in shared forwards (reader.answer_many)."""
        todo = list(dict.fromkeys(t for t in texts if (question, t) not in self.memo))
        if todo:
            outs = reader.answer_many(self.model, self.tokenizer, question, todo, top_n=1)
            self.memo.update({(question, t): o for t, o in zip(todo, outs)})

    def said(self, question: str, text: str) -> str:
        out = self(question, text)
        return "" if out["no_answer"] or not out["answers"] else out["answers"][0]["answer"]


def hard_negatives(questions: list[Example], passages: list[dict], ranked: list[list[int]],
                   per_question: int) -> list[Example]:
    """Retrieved-but-wrong passages as "no answer" examples: for each question, the first `per_question` of
    its retrieved passages (`ranked`, best first) that are not its own and do not contain its answer (some
    facts are stated in two passages). Trained on, they teach the reader to refuse a passage that is near
    the question but does not answer it, which is what it meets when it reads the top k."""
    gold = gold_passages(passages, questions)
    out = []
    for q, g, ranks in zip(questions, gold, ranked):
        picked = [j for j in ranks if j != g and not any(a.lower() in passages[j]["text"].lower() for a in q.answers)]
        out += [Example(f"{q.id}-not-{j}", passages[j]["text"], q.question, (), (), title=passages[j]["title"])
                for j in picked[:per_question]]
    return out


def gold_passages(passages: list[dict], questions: list[Example]) -> list[int | None]:
    """Each question's passage in the corpus: the one whose text is its context, else the one with its title."""
    by_text = {p["text"]: i for i, p in enumerate(passages)}
    by_title = {p["title"]: i for i, p in enumerate(passages)}
    return [by_text.get(q.context, by_title.get(q.title)) for q in questions]


def rank_passages(passages: list[dict], questions: list[Example], embed: Callable[[list[str]], np.ndarray],
                  depth: int) -> list[list[int]]:
    """The retriever, as Ask the corpus retrieves: the embedder's nearest passages (cosine of L2-normalised
    vectors of "title: text", exact), its first hybrid.CANDIDATES re-ranked by fusing with BM25 over the same
    text (backend/engines/embedding/hybrid.py); the first `depth` of each question's ranking."""
    docs = [f"{p['title']}: {p['text']}" if p.get("title") else p["text"] for p in passages]
    vectors = embed(docs)
    queries = embed([q.question for q in questions])
    bm25 = hybrid.Bm25(docs)
    out = []
    for q, v in zip(questions, queries):
        scores = vectors @ v
        dense = [int(i) for i in np.argsort(-scores, kind="stable")]
        cands = dense[:hybrid.CANDIDATES]
        fused = [i for i, *_ in hybrid.rerank(cands, [float(scores[i]) for i in cands], bm25, q.question)]
        out.append((fused + dense[hybrid.CANDIDATES:])[:depth])
    return out


def chapter7_table(general, adapted, tokenizer, test: list[Example], passages: list[dict],
                   embed: Callable[[list[str]], np.ndarray], say: Callable[[str], None] | None = None) -> dict:
    """The before/after table on the test split (see the module doc): plain data, percentages."""
    t0 = time.perf_counter()
    gold = gold_passages(passages, test)
    ranked = rank_passages(passages, test, embed, max(max(RECALL_K), max(END_TO_END_K)))
    answerable = [i for i, q in enumerate(test) if q.answerable and gold[i] is not None]
    recall = []
    for k in RECALL_K:
        hits = [float(gold[i] in ranked[i][:k]) for i in answerable]
        lo, hi = stats.bootstrap(hits, _mean)
        recall.append({"k": k, "recall": round(100 * float(np.mean(hits)), 2) if hits else 0.0,
                       "ci": [round(100 * lo, 2), round(100 * hi, 2)], "questions": len(hits)})
    readers, said = [], {}
    for name, model in (("general", general), ("adapted", adapted)):
        if say is not None:
            say(f"Measuring the {name} reader on {len(test)} test questions")
        reads = _Reads(model, tokenizer)
        for i, q in enumerate(test):  # a question's own passage and its retrieved ones: one forward
            reads.prefetch(q.question, [q.context] + [passages[j]["text"] for j in ranked[i][:max(END_TO_END_K)]])
        preds = {"gold": [reads.said(q.question, q.context) for q in test]}
        for k in END_TO_END_K:
            preds[k] = []
            for i, q in enumerate(test):
                top, _ = reader.read_passages(model, tokenizer, q.question,
                                              [passages[j]["text"] for j in ranked[i][:k]], reads)
                preds[k].append(top["answer"] if top else "")
        said[name] = {key: _columns(test, p) for key, p in preds.items()}
        readers.append({"name": name, "threshold": round(float(getattr(model.config, "null_threshold", 0.0)), 4),
                        "on_gold": _summary(test, preds["gold"]),
                        "end_to_end": [{"k": k, **_summary(test, preds[k])} for k in END_TO_END_K]})

    def change(key) -> dict:
        (ge, gf, gr), (ae, af, ar) = said["general"][key], said["adapted"][key]
        return {"exact": _difference(ge, ae), "f1": _difference(gf, af), "lenient": _difference(gr, ar)}

    return {"questions": len(test), "answerable": sum(q.answerable for q in test),
            "unanswerable": sum(not q.answerable for q in test), "passages": len(passages),
            "test_passages": len({q.context for q in test}), "recall": recall, "readers": readers,
            "difference": {"on_gold": change("gold"), "end_to_end": [{"k": k, **change(k)} for k in END_TO_END_K]},
            "bootstrap": dict(BOOTSTRAP), "measure_s": round(time.perf_counter() - t0, 2)}


def recipe_settings() -> dict:
    return {"recipe": asdict(RECIPE_SETTINGS), "recall_k": RECALL_K, "end_to_end_k": END_TO_END_K,
            "rank_penalties": RANK_PENALTIES, "read_depths": READ_DEPTHS, "hard_negatives": HARD_NEGATIVES,
            "bootstrap": BOOTSTRAP, "retrieval": {"candidates": hybrid.CANDIDATES, **hybrid.SETTING}}
