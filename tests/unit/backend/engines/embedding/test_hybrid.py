"""Hybrid retrieval: BM25's terms and scores (rank_bm25), the two fusions, and the re-ranking of dense candidates."""

import numpy as np
import pytest

from backend.engines.embedding import hybrid

DOCS = ["Quantization: int8 quantization makes a model about four times smaller.",
        "Distillation: a small student learns from a teacher's soft targets.",
        "Tokenization: WordPiece splits words into subword pieces."]


def test_words_are_lowercased_stemmed_without_stop_words():
    assert hybrid.words("How much smaller does Quantized int8 make the GPT-2 model?") == [
        "smaller", "quantiz", "int8", "make", "gpt-2", "model"]
    assert hybrid.words("the of and") == []


def test_bm25_scores_the_passages_that_share_the_question_s_rare_words():
    bm25 = hybrid.Bm25(DOCS)
    s = bm25.scores("What does quantization do to a model's size?")
    assert s.shape == (3,) and s[0] > 0 and s[0] == s.max() and s[2] == 0
    assert np.argmax(bm25.scores("soft targets of a teacher")) == 1
    assert not bm25.scores("the of and").any()  # no term: no score
    assert hybrid.Bm25([]).scores("anything").shape == (0,)


def test_weighted_fusion_mixes_min_max_normalised_scores():
    dense, sparse = np.array([0.9, 0.8, 0.5]), np.array([0.0, 6.0, 2.0])
    fused = hybrid.fuse(dense, sparse, {"method": "weighted", "alpha": 0.25})
    np.testing.assert_allclose(fused, [0.25 * 1.0, 0.25 * 0.75 + 0.75 * 1.0, 0.75 * (2 / 6)])
    # a constant column (no candidate shares a word with the question) adds nothing: the dense order stays
    flat = hybrid.fuse(dense, np.zeros(3), {"method": "weighted", "alpha": 0.1})
    assert list(np.argsort(-flat, kind="stable")) == [0, 1, 2]


def test_reciprocal_rank_fusion_adds_one_over_c_plus_rank():
    fused = hybrid.fuse(np.array([0.9, 0.8, 0.5]), np.array([0.0, 6.0, 2.0]), {"method": "rrf", "c": 1})
    np.testing.assert_allclose(fused, [1 / 2 + 1 / 4, 1 / 3 + 1 / 2, 1 / 4 + 1 / 3])


@pytest.mark.parametrize("setting", [hybrid.SETTING, {"method": "rrf", "c": 60}])
def test_rerank_keeps_the_candidates_and_sorts_them_by_fused_score(setting):
    bm25 = hybrid.Bm25(DOCS)
    out = hybrid.rerank([2, 1, 0], [0.7, 0.6, 0.5], bm25, "int8 quantization", setting)
    assert sorted(i for i, *_ in out) == [0, 1, 2]
    assert [f for _, f, *_ in out] == sorted((f for _, f, *_ in out), reverse=True)
    if setting["method"] == "weighted":  # the dense retriever's last candidate holds the question's exact terms
        assert out[0][0] == 0
    else:  # RRF with 3 candidates: first by dense (1/61) and second by BM25 (a tie at 0) beats last and first
        assert out[0][0] == 2
    assert hybrid.rerank([], [], bm25, "int8") == []
