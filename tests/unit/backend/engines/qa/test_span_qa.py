"""Copy-only span QA (backend.engines.qa.span_qa) on a tiny random Llama with the SmolLM2 tokenizer.

A random model's preferences are noise, so these tests check what must hold whatever the model
prefers: every row the model is fed is a run of the context's own tokens inside one sentence,
offsets are exact, the top-n spans are distinct, the no-answer decision follows the margin,
the budget stops the work, and the runner reports what happened truthfully.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from backend.engines.qa import span_qa
from backend.pipelines import tasks as P
from backend.runtime import budget, config
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama

CONTEXT = ("The Rhine rises in the Swiss Alps and flows 1,230 km to the North Sea. It passes Basel and "
           "Cologne. Its largest port is Duisburg.")
QUESTION = "How long is the Rhine?"


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return tiny_llama(max_position_embeddings=1024, pad_token_id=tok.pad_token_id)


def test_sentences_and_the_excerpt_map_back_to_the_context():
    sents = span_qa.sentences(CONTEXT)
    assert [CONTEXT[s:e] for s, e in sents] == [
        "The Rhine rises in the Swiss Alps and flows 1,230 km to the North Sea.",
        "It passes Basel and Cologne.", "Its largest port is Duisburg."]
    # A decimal point does not end a sentence; a blank line does ("Dr." does: a known limit).
    assert span_qa.sentences("Dr. Who? 3.5 km away.\n\nNext one") == [(0, 3), (4, 8), (9, 21), (23, 31)]
    # The two sentences closest to the question by `rank`, read in the context's order.
    ex = span_qa.excerpt(CONTEXT, QUESTION, rank=lambda q, ss: [0.1, 0.9, 0.5], keep=2)
    assert ex.kept == [1, 2] and ex.text == "It passes Basel and Cologne. Its largest port is Duisburg."
    for i, ch in enumerate(ex.text):
        assert (ex.origin[i] == -1 and ch == " ") or CONTEXT[ex.origin[i]] == ch
    assert span_qa.excerpt(CONTEXT, QUESTION).text == CONTEXT.replace("  ", " ")


def test_an_answer_is_whole_words_and_whole_numbers():
    text = "It flows 1,230 km past Warsaw."
    assert not any(span_qa.inside_word(text, text.index(w)) for w in ("It", "flows", "1,230", "km", "Warsaw"))
    assert span_qa.inside_word(text, text.index("230")) and span_qa.inside_word(text, text.index(",230"))
    assert span_qa.inside_word(text, text.index("saw")) and not span_qa.inside_word(text, text.index("."))


def test_the_prompt_locates_the_excerpt_and_caches_only_the_demos(tok):
    ex = span_qa.excerpt(CONTEXT, QUESTION)
    p = span_qa.build_prompt(tok, QUESTION, ex)
    assert "".join(ex.text[s:e] for s, e in p.offsets[p.first:p.last]) == ex.text
    assert all(o == (-1, -1) for o in p.offsets[:p.first] + p.offsets[p.last:])
    # The cached prefix holds the demos and ends before the question's own turn.
    assert 0 < p.prefix < p.first and "Ada Lovelace" in tok.decode(p.ids[:p.prefix])
    assert "Rhine" not in tok.decode(p.ids[:p.prefix])
    assert [p.piece[k] for k in range(p.first, p.last)] == sorted(p.piece[p.first:p.last])


def test_every_row_fed_is_a_copy_of_one_sentence(model, tok, monkeypatch):
    """Watch the batched forward: each span row is the context's own run (first word in either spelling)."""
    fed = []
    real = span_qa._forward

    def spy(model_, ids, cache, past):
        fed.append(ids.tolist())
        return real(model_, ids, cache, past)

    monkeypatch.setattr(span_qa, "_forward", spy)
    span_qa._PREFIXES.clear()
    out = span_qa.answer_spans(model, tok, QUESTION, CONTEXT, top_n=3, max_answer_tokens=6, starts=10)
    ex = span_qa.excerpt(CONTEXT, QUESTION)
    p = span_qa.build_prompt(tok, QUESTION, ex)
    rows = fed[-1]
    # the demos once (then cached), the question-free prompt's rest (the no-answer reply fed on in the same
    # forward), the prompt's rest, the copies in one batch
    assert len(fed) == 4 and fed[1][0][:3] == fed[2][0][:3]
    assert len(rows) == 11  # 10 starts + the no-answer reply
    assert rows[-1][:3] == tok(span_qa.NO_ANSWER_REPLY, add_special_tokens=False)["input_ids"][:3]
    sentence_ids = [[p.ids[k] for k in range(p.first, p.last) if p.piece[k] == i] for i in range(3)]
    copies = sentence_ids[0], sentence_ids[1], sentence_ids[2]

    def is_copy(seq):  # a run of one sentence (its first word in either spelling)
        return any(any((ids[i] == seq[0] or span_qa.bare_variant(tok, ids[i]) == seq[0])
                       and ids[i + 1:i + len(seq)] == seq[1:] for i in range(len(ids) - len(seq) + 1))
                   for ids in copies)

    for row in rows[:-1]:
        n = max(n for n in range(1, len(row) + 1) if is_copy(row[:n]))  # the copy; the rest pads the batch
        assert all(t == row[n - 1] for t in row[n:]), tok.decode(row)
    assert any(is_copy(row) and len(row) == 6 for row in rows[:-1])  # full-width rows are whole copies
    assert out["candidates"] > 10


@pytest.mark.parametrize("question,context,top_n", [
    (QUESTION, CONTEXT, 5),
    ("Who?", "Anna met Bo. Anna met Cy. Bo met Anna.", 8),  # repeated runs: distinct spans only
])
def test_answers_are_distinct_exact_spans_best_first(model, tok, question, context, top_n):
    out = span_qa.answer_spans(model, tok, question, context, top_n=top_n, max_answer_tokens=6)
    answers = out["answers"]
    texts = [a["answer"] for a in answers]
    assert 1 <= len(answers) <= top_n and len(set(texts)) == len(texts)
    assert [a["calibrated"] for a in answers] == sorted((a["calibrated"] for a in answers), reverse=True)
    for a in answers:
        assert context[a["start"]:a["end"]] == a["answer"] and a["answer"] == a["answer"].strip()
        assert "." not in a["answer"][:-1] or context.count(".") == 0  # never across a sentence end
        assert 0 < a["score"] < 1 and a["tokens"] <= 6
        assert not span_qa.inside_word(context, a["start"]) and not span_qa.inside_word(context, a["end"])
    total = sum(a["score"] for a in answers) + out["no_answer_score"]
    assert total <= 1 + 1e-6  # shares of all the replies scored
    # answering at all: every distinct span's probability, summed (at least the best span's)
    assert out["answer_calibrated"] >= answers[0]["calibrated"] - 1e-6
    assert out["no_answer"] == (out["answer_calibrated"] - out["no_answer_calibrated"] <= out["margin"]
                                or bool(out["absent_terms"]))
    if len(answers) < top_n:
        assert out["why_fewer"] and f"only {len(answers)} distinct span" in out["why_fewer"]


def test_punctuation_alone_is_never_an_answer(model, tok):
    context = "Red, green, blue; cyan, magenta, yellow. Black, white, grey - and silver, gold, bronze."
    out = span_qa.answer_spans(model, tok, "Which colours?", context, top_n=8, max_answer_tokens=3)
    assert out["answers"] and all(any(c.isalnum() for c in a["answer"]) for a in out["answers"]), out["answers"]


def test_a_question_about_what_the_text_never_mentions_gets_no_answer_and_says_which_word(model, tok):
    out = span_qa.answer_spans(model, tok, "How much does a ticket cost on the Rhine?", CONTEXT, top_n=2,
                               margin=-1e9)  # whatever the spans score
    assert out["no_answer"] and out["no_answer_reason"] == "absent terms" and out["absent_terms"] == ["ticket"]
    assert out["answers"]  # what the model would have copied is still listed
    ok = span_qa.answer_spans(model, tok, QUESTION, CONTEXT, top_n=1, margin=-1e9)
    assert not ok["no_answer"] and ok["no_answer_reason"] is None and ok["absent_terms"] == []


def test_the_excerpt_offsets_point_into_the_full_context(model, tok):
    rank = lambda q, ss: [0.0, 0.0, 1.0]  # noqa: E731  only the last sentence is read
    out = span_qa.answer_spans(model, tok, "Which port?", CONTEXT, top_n=4, rank=rank, keep=1)
    assert out["sentences_read"] == 1 and out["sentences"] == 3
    for a in out["answers"]:
        assert CONTEXT[a["start"]:a["end"]] == a["answer"] and a["start"] >= CONTEXT.index("Its largest")


def test_the_no_answer_rule_follows_the_margin(model, tok):
    base = span_qa.answer_spans(model, tok, QUESTION, CONTEXT, top_n=1, max_answer_tokens=3)
    gap = base["answer_calibrated"] - base["no_answer_calibrated"]
    strict = span_qa.answer_spans(model, tok, QUESTION, CONTEXT, top_n=1, max_answer_tokens=3, margin=gap + 1)
    lax = span_qa.answer_spans(model, tok, QUESTION, CONTEXT, top_n=1, max_answer_tokens=3, margin=gap - 1)
    assert strict["no_answer"] is True and lax["no_answer"] is False
    assert strict["answers"] == lax["answers"] == base["answers"]  # the decision never changes the spans


def test_the_cached_demos_give_the_same_scores_as_a_full_forward(model, tok):
    p = span_qa.build_prompt(tok, QUESTION, span_qa.excerpt(CONTEXT, QUESTION))
    text = span_qa.excerpt(CONTEXT, QUESTION).text
    cached = span_qa.score_spans(model, tok, p, text)
    p.prefix = 0
    full = span_qa.score_spans(model, tok, p, text)
    assert cached[1] == pytest.approx(full[1], abs=1e-4)
    assert [s[1:] for s in cached[0]] == [s[1:] for s in full[0]]
    assert max(abs(a[0] - b[0]) for a, b in zip(cached[0], full[0])) < 1e-4


def test_the_budget_stops_the_work_between_forwards(model, tok, monkeypatch):
    with budget.scope(seconds=1e-9):
        with pytest.raises(budget.BudgetExceeded, match="Shorten the context"):
            span_qa.answer_spans(model, tok, QUESTION, CONTEXT)
    b = budget.Budget(seconds=60)
    calls = []
    real = span_qa._forward

    def cancel_after_the_prompt(model_, ids, cache, past):  # a Stop click while the prompt is read
        calls.append(ids.shape)
        out = real(model_, ids, cache, past)
        if len(calls) == 3:
            b.cancel()
        return out

    monkeypatch.setattr(span_qa, "_forward", cancel_after_the_prompt)
    span_qa._PREFIXES.clear()
    with budget.scope(budget=b), pytest.raises(budget.Cancelled, match="candidate starts to score"):
        span_qa.answer_spans(model, tok, QUESTION, CONTEXT)
    assert len(calls) == 3  # the copies' batch never ran


def test_hostile_input_gets_readable_refusals(model, tok):
    with pytest.raises(InputError, match="question is empty"):
        span_qa.answer_spans(model, tok, "  ", CONTEXT)
    with pytest.raises(InputError, match="exceeds the model's 1024-token window"):
        span_qa.answer_spans(model, tok, QUESTION, "The river is long. " * 300)


def test_the_runner_keeps_the_api_shape_and_says_why_fewer(model, tok):
    lm = SimpleNamespace(model=model, tokenizer=tok, method=config.METHOD_SPAN, checkpoint="tiny-llama")
    r = P.qa(lm, QUESTION, CONTEXT, top_n=4, max_answer_tokens=4)
    assert r["method"] == config.METHOD_SPAN and isinstance(r["no_answer"], bool)
    assert r["top_n"] == {"asked": 4, "given": len(r["answers"])} and r["scoring"] == span_qa.SCORING
    assert all(a["match"] == "exact" and CONTEXT[a["start"]:a["end"]] == a["answer"] for a in r["answers"])
    if r["no_answer"]:
        assert (r["answer"], r["score"], r["start"], r["end"]) == ("", None, None, None)
        assert any(n.startswith("No answer in this text") for n in r["notices"])
    else:
        best = r["answers"][0]
        assert (r["answer"], r["start"], r["end"], r["score"]) == (best["answer"], best["start"], best["end"],
                                                                   best["score"])
    tiny = P.qa(lm, "Who?", "Anna.", top_n=20, max_answer_tokens=3)
    assert tiny["top_n"]["asked"] == 20 and tiny["top_n"]["given"] == len(tiny["answers"]) < 20
    assert any(n.startswith(f"Asked for 20 answer spans; {len(tiny['answers'])} given: only") for n in tiny["notices"])
    with pytest.raises(InputError, match="cannot be served by method 'instruct-fallback'"):
        P.qa(SimpleNamespace(**{**vars(lm), "method": config.METHOD_INSTRUCT}), QUESTION, CONTEXT)


def test_the_local_profile_serves_qa_by_the_reader_trained_here():
    """The reader (MiniLM + span head, backend/hub/reader_builder.py) won on HELD_OUT_4 (bench/results/qa.md);
    span decoding stays reachable through /qa's qa_method and keeps its own words."""
    spec = config.LOCAL["qa"]
    assert spec.method == config.METHOD_FINETUNED and spec.module == config.MINILM["module"]
    assert config.method_name(config.METHOD_SPAN) == "copy-only span decoding"
    assert "never free text" in config.method_text(config.METHOD_SPAN, "QA")


def test_scores_are_probabilities_of_exact_replies(model, tok):
    """A span's log-prob is the teacher-forced sum over the reply's tokens and the end of turn."""
    ctx = "Anna met Bo in Rome."
    out = span_qa.answer_spans(model, tok, "Where?", ctx, top_n=1, max_answer_tokens=3, starts=30)
    a = out["answers"][0]
    p = span_qa.build_prompt(tok, "Where?", span_qa.excerpt(ctx, "Where?"))
    k = next(k for k in range(p.first, p.last) if p.offsets[k][1] > a["start"])
    run = p.ids[k:k + a["tokens"]]
    eot = span_qa.end_id(tok)

    n = len(p.ids)
    with torch.inference_mode():
        first_lp = model(torch.tensor([p.ids])).logits[0, -1].float().log_softmax(-1)
    bare = span_qa.bare_variant(tok, run[0])
    spellings = [run[0]] + ([bare] if bare is not None else [])
    fed = max(spellings, key=lambda t: float(first_lp[t]))  # the likelier spelling is copied on
    with torch.inference_mode():
        lp = model(torch.tensor([p.ids + [fed] + run[1:] + [eot]])).logits[0].float().log_softmax(-1)
    rest = sum(float(lp[n + j, t]) for j, t in enumerate(run[1:] + [eot]))
    first = float(torch.logsumexp(first_lp[spellings], 0))  # either spelling of the first word
    assert a["logprob"] == pytest.approx(first + rest, abs=1e-3)
    # Calibrated: less `calibrate` x the first word's log-prob when the question says nothing.
    null = span_qa.build_prompt(tok, span_qa.NULL_QUESTION, span_qa.excerpt(ctx, "Where?"))
    assert null.ids[:null.last] == p.ids[:p.last]  # the same context tokens at the same places
    with torch.inference_mode():
        null_lp = model(torch.tensor([null.ids])).logits[0, -1].float().log_softmax(-1)
    expected = a["logprob"] - span_qa.DEFAULT_CALIBRATION * float(torch.logsumexp(null_lp[spellings], 0))
    assert out["calibrate"] == span_qa.DEFAULT_CALIBRATION > 0
    assert a["calibrated"] == pytest.approx(expected, abs=1e-3)
    # The no-answer reply: less its whole log-prob (words and end of turn) when the question says nothing.
    refusal = tok(span_qa.NO_ANSWER_REPLY, add_special_tokens=False)["input_ids"] + [eot]
    with torch.inference_mode():
        lp = model(torch.tensor([null.ids + refusal])).logits[0].float().log_softmax(-1)
    na_null = sum(float(lp[len(null.ids) - 1 + j, t]) for j, t in enumerate(refusal))
    assert out["no_answer_calibrated"] == pytest.approx(out["no_answer_logprob"] - na_null, abs=1e-3)
    plain = span_qa.answer_spans(model, tok, "Where?", ctx, top_n=1, max_answer_tokens=3, starts=30, calibrate=0)
    assert plain["answers"][0]["calibrated"] == plain["answers"][0]["logprob"]
    assert plain["no_answer_calibrated"] == plain["no_answer_logprob"]
