"""What a search score means (backend/search/score_meaning.py) and a weak QA answer
(backend/pipelines/answer_strength.py): each score is read against the others, with the threshold said."""

from __future__ import annotations

import numpy as np

from backend.pipelines import answer_strength
from backend.search import score_meaning
from components.pipelines.plots import answer_markdown
from components.search.ui import results_html


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_e5s_narrow_band_is_said_and_minilms_wide_one_is_not():
    rng = np.random.default_rng(0)
    common = rng.standard_normal(384)
    e5 = _unit(2.0 * common + rng.standard_normal((500, 384)) * 0.9)  # every passage near one direction: ~0.8
    q = _unit(2.0 * common + rng.standard_normal(384) * 0.9)
    scores = sorted((e5 @ q).tolist(), reverse=True)[:3]
    c = score_meaning.context(e5, q, scores)
    assert 0.7 < c["median"] < 0.9 and c["narrow"] and "narrow band" in c["text"]
    assert f"{scores[0] - scores[1]:.3f} above the next result" in c["text"]
    minilm = _unit(rng.standard_normal((500, 384)))
    q2 = minilm[7] * 0.6 + _unit(rng.standard_normal(384)) * 0.4
    c2 = score_meaning.context(minilm, _unit(q2), sorted((minilm @ _unit(q2)).tolist(), reverse=True)[:3])
    assert abs(c2["median"]) < 0.1 and not c2["narrow"] and "narrow band" not in c2["text"]
    res = {"results": [{"rank": 1, "score": scores[0], "title": "t", "text": "x"}], "timing_ms":
           {"encode": 1.0, "search": 0.1, "total": 1.2}, "count": 500, "corpus": "c", "index_type": "Flat",
           "notes": [], "score_meaning": c}
    assert "tlab-score-meaning" in results_html(res) and "narrow band" in results_html(res)


def test_a_weak_qa_answer_is_flagged_with_the_threshold_chosen():
    ctx = "It was found near the town of Rashid and is kept in the British Museum."
    rashid, museum = ctx.index("the town of Rashid"), ctx.index("the British Museum")
    r = {"answer": "the town of Rashid", "score": 0.33, "no_answer": False, "start": rashid, "end": rashid + 18,
         "answers": [{"answer": "the town of Rashid", "score": 0.33, "start": rashid, "end": rashid + 18},
                     {"answer": "the British Museum", "score": 0.21, "start": museum, "end": museum + 18}]}
    s = answer_strength.judge(r)
    assert s["weak"] and s["threshold"] == 0.5 and s["margin"] == 0.12
    md = answer_markdown({**r, "strength": s})
    assert md.count("**") == 2 and "Weak answer\\: the model gives this span 0.33 of its probability, under the 0.50" in md
    assert "the British Museum" in md
    # "in 1799" 0.47 and "1799" 0.27 are one answer: together 0.74, not a weak one
    year = {"answer": "in 1799", "score": 0.47, "start": 10, "end": 17, "no_answer": False,
            "answers": [{"answer": "in 1799", "score": 0.47, "start": 10, "end": 17},
                        {"answer": "1799", "score": 0.27, "start": 13, "end": 17},
                        {"answer": "Egypt", "score": 0.1, "start": 40, "end": 45}]}
    s = answer_strength.judge(year)
    assert not s["weak"] and s["support"] == 0.74 and "'1799'" in s["text"] and "\"Egypt\", has 0.10" in s["text"]
    assert answer_strength.judge({"no_answer": True, "score": None, "answer": ""}) is None


def test_the_index_sweep_names_a_fastest_only_where_the_rule_allows():
    from backend.search import speed
    from components.search.plots import tradeoff_figure
    from components.shell import notice_of

    rng = np.random.default_rng(1)
    base = rng.uniform(0.05, 0.2, 50)

    def row(label, scale, noise):
        each = (base * scale * rng.normal(1, noise, 50)).tolist()
        return {"label": label, "index_type": "Flat (exact)" if label == "Flat" else label, "query_ms_each": each,
                "query_ms_median": float(np.median(each)), "recall_at_k": 1.0, "recall_k": 10, "memory_mb": 1.0,
                "build_s": 0.1}

    tied = speed.fastest_claim([row("Flat", 1.0, 0.01), row("SQ8", 1.02, 0.01)])
    said = notice_of(tradeoff_figure(tied))
    assert said.startswith("no configuration is named the fastest: the ratio of") and "1.10x" in said
    clear = speed.fastest_claim([row("Flat", 1.0, 0.01), row("HNSW", 0.2, 0.01)])
    assert next(r for r in clear if r["label"] == "HNSW")["fastest_claim"]["claimed"]
    assert notice_of(tradeoff_figure(clear)).startswith("the fastest configuration, HNSW")
