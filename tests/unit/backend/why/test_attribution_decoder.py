"""The decoder's removals reuse the prompt's cached keys and values (the tokens before the first
removed one are the prompt's own): the same numbers as recomputing each shortened prompt whole,
on a tiny random llama with the real SmolLM2 tokenizer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.why import checks, methods, tasks
from backend.why.targets import suffix_groups
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama

PROMPT = "The capital of France is a city with old bridges over a river, and the people who live there call it"


@pytest.fixture(scope="module")
def decoder():
    return tiny_llama().eval(), smollm2_tokenizer()


def _spy(target):
    calls = []
    real = target.prefix_score

    def spy(shared, suffixes):
        calls.append((shared, [len(s) for s in suffixes]))
        return real(shared, suffixes)

    target.prefix_score = spy
    return calls, real


@pytest.mark.parametrize("contrast", [None, "London"])
def test_cached_prefix_gives_the_numbers_of_whole_rows(decoder, contrast):
    model, tok = decoder
    t, info = tasks.next_token(model, tok, PROMPT, contrast=contrast)
    assert t.prefix_score is not None
    rng = np.random.default_rng(0)
    keep = rng.random((40, len(t.positions))) > rng.random((40, 1))
    keep[20:, :-8] = True  # half the rows remove only some of the last 8 tokens
    keep[0], keep[1] = True, False  # the whole prompt; every token removed (the start token alone)
    calls, real = _spy(t)
    cached = t.scores_without(keep)
    assert any(max(shared) > 0 for shared, _ in calls)  # the shortcut was taken
    t.prefix_score = None
    whole = t.scores_without(keep)
    t.prefix_score = real
    assert np.allclose(cached, whole, atol=1e-5), np.abs(cached - whole).max()
    assert cached[0] == pytest.approx(t.value(), abs=1e-5)
    with torch.no_grad():
        alone = model(input_ids=torch.tensor([[tok.bos_token_id]])).logits[0, -1].float()
    a = info["target"]["id"]
    expect = alone.softmax(-1)[a] if contrast is None else alone[a] - alone[info["contrast"]["id"]]
    assert cached[1] == pytest.approx(float(expect), abs=1e-5)


def test_occlusion_with_the_cache_is_each_shortened_prompt_recomputed(decoder):
    model, tok = decoder
    t, info = tasks.next_token(model, tok, PROMPT)
    calls, _ = _spy(t)
    occ = methods.occlusion(t)
    n = len(t.ids)  # each row computes only what follows its removed token (the old batches shared their least)
    rows = sorted((k, length) for shared, lengths in calls[1:] for k, length in zip(shared, lengths))
    assert rows == sorted((min(p, n - 2), n - 1 - min(p, n - 2)) for p in t.positions)
    lengths = [length for _, got in calls[1:] for length in got]
    assert lengths == sorted(lengths, reverse=True) and len(calls) > 2  # batched by length, longest first
    target = info["target"]["id"]
    for i in (0, len(t.ids) // 2, len(t.ids) - 1):
        short = t.ids[:i] + t.ids[i + 1:]
        with torch.no_grad():
            p = model(input_ids=torch.tensor([short])).logits[0, -1].float().softmax(-1)[target]
        assert occ[t.positions.index(i)] == pytest.approx(t.value() - float(p), abs=1e-6)


def _partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        yield [[first]] + part
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]


def test_suffix_groups_put_the_fewest_tokens_through_the_model():
    rng = np.random.default_rng(3)
    cost = lambda groups, lengths, over: sum(len(g) * max(lengths[i] for i in g) + over for g in groups)  # noqa: E731
    for _ in range(40):
        lengths = rng.integers(1, 60, size=int(rng.integers(1, 8))).tolist()
        over = int(rng.integers(0, 40))
        got = suffix_groups(lengths, overhead=over, max_rows=99, max_tokens=10**6)
        assert sorted(i for g in got for i in g) == list(range(len(lengths)))
        assert cost(got, lengths, over) == min(cost(p, lengths, over) for p in _partitions(list(range(len(lengths)))))
    lengths = [120] * 40 + [3] * 40
    groups = suffix_groups(lengths, overhead=0, max_rows=32, max_tokens=2048)
    assert all(len(g) <= 32 and (len(g) * max(lengths[i] for i in g) <= 2048 or len(g) == 1) for g in groups)
    assert suffix_groups([]) == []


def test_deletion_check_is_the_same_with_and_without_the_cache(decoder):
    model, tok = decoder
    t, _ = tasks.next_token(model, tok, PROMPT, target="Paris", contrast="London")
    scores = {"occlusion": methods.occlusion(t), "gradient_x_input": methods.gradient_x_input(t)}
    cached = checks.deletion(t, scores, random_orders=3)
    full = t.value()  # the one-token rows read from occlusion's own forwards (what /attribute does)
    reused = checks.deletion(t, scores, random_orders=3, known=(full, full - scores["occlusion"]))
    t.prefix_score = None
    whole = checks.deletion(t, scores, random_orders=3)
    for m in scores:
        assert np.allclose(cached["curves"][m], whole["curves"][m], atol=1e-4)
        assert np.allclose(reused["curves"][m], whole["curves"][m], atol=1e-4)
    assert cached["ranking"] == whole["ranking"] == reused["ranking"]


def test_the_decoders_prompt_is_held_to_its_own_limit(decoder):
    model, tok = decoder
    assert tasks.DECODER_MAX_TOKENS == 128  # was 96 while a 128-token prompt did not fit the request budget
    prompt = "word " * (tasks.DECODER_MAX_TOKENS + 5)
    assert len(tok(prompt)["input_ids"]) > tasks.DECODER_MAX_TOKENS
    with pytest.raises(InputError, match=f"at most {tasks.DECODER_MAX_TOKENS} tokens"):
        tasks.next_token(model, tok, prompt)
    fits = tok.decode(tok(prompt)["input_ids"][:tasks.DECODER_MAX_TOKENS])
    assert len(tasks.next_token(model, tok, fits)[0].ids) == tasks.DECODER_MAX_TOKENS


def test_attribute_explains_a_128_token_prompt_at_the_defaults(decoder, monkeypatch):
    """/attribute on a 128-token prompt with every method and the decoder's default settings: every token
    scored, the checks computed, occlusion equal to recomputing the prompt without each token."""
    import json

    from backend.why import api
    from backend.runtime import config

    model, tok = decoder

    class LM:
        method = config.METHOD_MODEL

        def __init__(self):
            self.model, self.tokenizer = model, tok

        @staticmethod
        def describe():
            return {"checkpoint": "tiny llama", "source": "test"}

    monkeypatch.setattr(api.hub, "load", lambda *a, **k: LM())
    read_attention, real = [], methods.attention_scores
    monkeypatch.setattr(api.mth, "attention_scores", lambda t: read_attention.append(1) or real(t))
    prompt = tok.decode(tok(PROMPT * 8)["input_ids"][:128])
    assert len(tok(prompt)["input_ids"]) == 128
    r = api.attribute(prompt, task="next_token", contrast="London")
    json.dumps(r)
    assert len(r["tokens"]) == 128 and r["methods"] == list(methods.METHODS)
    assert r["settings"] == {**r["settings"], "steps": 16, "random_orders": 4}
    assert r["checks"]["completeness"]["steps"] == 16 and r["checks"]["deletion"]["random_orders"] == 4
    claim = r["checks"]["faithfulness"]  # named only where its conditions hold; else it says why not
    assert r["checks"]["most_faithful"] == claim["method"] and claim["text"]
    assert (claim["method"] in api.EXPLANATIONS) == (claim["status"] == "claimed")
    assert len(r["checks"]["agreement"]["methods"]) == 5
    assert read_attention == [1] and r["timing"]["last_layer_attention"] > 0  # one forward for both, timed as alone
    t, _ = tasks.next_token(model, tok, prompt, contrast="London")
    ids = t.ids
    for i in (0, 63, 127):
        short = ids[:i] + ids[i + 1:]
        with torch.no_grad():
            out = model(input_ids=torch.tensor([short])).logits[0, -1].float()
        a, c = r["prediction"]["target"]["id"], r["prediction"]["contrast"]["id"]
        assert r["scores"]["occlusion"][i] == pytest.approx(r["value"] - float(out[a] - out[c]), abs=2e-5)
    with pytest.raises(InputError, match="at most 128 tokens"):
        api.attribute(prompt + " and more words", task="next_token")


def _head_widths(model):
    seen = []
    hook = model.lm_head.register_forward_hook(lambda _m, args, _out: seen.append(args[0].shape[1]))
    return seen, hook


@pytest.mark.parametrize("contrast", [None, "London"])
def test_the_lm_head_projects_only_the_position_that_is_read(decoder, contrast):
    """Every forward (the value, gradients, integrated gradients, the cached and the whole removals) sends
    one position per row through the LM head, and reads the numbers the full logits give."""
    model, tok = decoder
    t, info = tasks.next_token(model, tok, PROMPT, contrast=contrast)
    seen, hook = _head_widths(model)
    try:
        value = t.value()
        methods.gradient_x_input(t)
        methods.integrated_gradients(t, 4)
        keep = np.random.default_rng(1).random((10, len(t.positions))) > 0.4
        cached = t.scores_without(keep)
        real, t.prefix_score = t.prefix_score, None
        whole = t.scores_without(keep)
        t.prefix_score = real
    finally:
        hook.remove()
    assert seen and set(seen) == {1}, seen  # the old code projected every position: widths up to len(ids)
    a, c = info["target"]["id"], info.get("contrast", {}).get("id")
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([t.ids])).logits[0, -1].float()
    assert value == pytest.approx(float(logits.softmax(-1)[a] if c is None else logits[a] - logits[c]), abs=1e-6)
    assert np.allclose(cached, whole, atol=1e-5)
    for row, got in zip(keep, whole):
        kept = [i for i in range(len(t.ids)) if i not in {p for p, k in zip(t.positions, row) if not k}]
        with torch.no_grad():
            out = model(input_ids=torch.tensor([[t.ids[i] for i in kept]])).logits[0, -1].float()
        assert got == pytest.approx(float(out.softmax(-1)[a] if c is None else out[a] - out[c]), abs=1e-5)


class _NoSlicing(torch.nn.Module):
    """A causal LM whose forward takes no `logits_to_keep` (an older or custom class)."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.config = inner, inner.config
        self.lm_head = inner.lm_head

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, use_cache=None):
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                          past_key_values=past_key_values, use_cache=use_cache)


def test_a_model_without_logits_to_keep_reads_its_full_logits_to_the_same_numbers(decoder):
    model, tok = decoder
    fast, _ = tasks.next_token(model, tok, PROMPT, contrast="London")
    plain, _ = tasks.next_token(_NoSlicing(model), tok, PROMPT, contrast="London")
    assert tasks._keeps_positions(model) and not tasks._keeps_positions(_NoSlicing(model))
    seen, hook = _head_widths(model)
    try:
        occ = methods.occlusion(plain)
    finally:
        hook.remove()
    assert max(seen) > 1  # this one projects every position, as before
    assert np.allclose(occ, methods.occlusion(fast), atol=1e-6)
    assert np.allclose(methods.gradient_x_input(plain), methods.gradient_x_input(fast), atol=1e-6)
