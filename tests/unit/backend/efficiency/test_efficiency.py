"""The Efficiency panel's backend on tiny random models: int8 copies, sizes, perplexity, agreement.

Exact where the arithmetic is exact (a uniform distribution's perplexity is the vocabulary
size; agreement counts are integers), and the shared fp32 model must come out bit-identical.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from backend import efficiency
from backend.efficiency import api, measure as M
from backend.engines.compression import quantize as Q
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_gpt2, tiny_llama
from tests.helpers.efficiency_models import folders, served  # noqa: F401 (fixtures)


def _snapshot(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# ---------------------------------------------------------------------------- int8 copies


def test_int8_copy_leaves_the_fp32_model_untouched():
    model = tiny_llama(vocab_size=len(smollm2_tokenizer()), initializer_range=0.3)
    before = _snapshot(model)
    linears = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    q = Q.int8_copy(model)
    after = model.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert [n for n, m in model.named_modules() if isinstance(m, nn.Linear)] == linears  # still fp32 Linear
    assert not model.training and next(model.parameters()).dtype == torch.float32
    assert Q.count_int8_linears(q) == len(linears)  # every Linear, the output head included
    assert isinstance(q.lm_head, Q.token_scaled_class())
    assert Q.count_int8_linears(model) == 0
    kept = Q.int8_copy(model, skip=("lm_head",))
    assert Q.count_int8_linears(kept) == len(linears) - 1 and type(kept.lm_head) is nn.Linear


def test_int8_copy_computes_nearly_the_same_logits():
    model = tiny_llama(vocab_size=len(smollm2_tokenizer()), initializer_range=0.3)
    q = Q.int8_copy(model)
    ids = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    with torch.inference_mode():
        a, b = model(input_ids=ids).logits, q(input_ids=ids).logits
    assert a.shape == b.shape
    assert not torch.equal(a, b)  # it really is quantized
    assert float((a - b).norm() / a.norm()) < 0.1  # int8 weights: a few percent of error, not noise


def test_gpt2_conv1d_layers_are_quantized_too():
    model = tiny_gpt2()
    convs = sum(type(m).__name__ == "Conv1D" for m in model.modules())
    assert convs > 0
    work = __import__("copy").deepcopy(model)
    assert Q._conv1d_as_linear(work) == convs
    ids = torch.tensor([[3, 1, 4, 1, 5, 9]])
    with torch.inference_mode():
        assert torch.allclose(model(input_ids=ids).logits, work(input_ids=ids).logits, atol=1e-5)
    q = Q.int8_copy(model)
    assert Q.count_int8_linears(q) == convs + 1  # + lm_head
    assert sum(type(m).__name__ == "Conv1D" for m in model.modules()) == convs  # original untouched


def test_memory_counts_tied_weights_once_and_int8_is_smaller():
    model = tiny_llama(vocab_size=len(smollm2_tokenizer()), tie_word_embeddings=True)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    unique = {p.data_ptr(): p.numel() * p.element_size() for p in model.parameters()}
    buffers = sum(b.untyped_storage().nbytes() for b in model.buffers())
    assert Q.memory_bytes(model) == sum(unique.values()) + buffers
    q = Q.int8_copy(model, skip=("lm_head",))  # the head stays tied to the fp32 embedding
    assert q.lm_head.weight.data_ptr() == q.model.embed_tokens.weight.data_ptr()
    assert Q.memory_bytes(q) < Q.memory_bytes(model)
    assert Q.disk_bytes(q) < Q.disk_bytes(model)


def test_an_int8_linear_weighs_one_byte_per_weight_plus_its_scales():
    lin = nn.Sequential(nn.Linear(64, 32, bias=False))
    q = Q.int8_copy(lin, skip=())
    assert Q.count_int8_linears(q) == 1
    assert Q.memory_bytes(lin) == 64 * 32 * 4
    assert Q.memory_bytes(q) == 64 * 32 + 32 * 16  # int8 weights + a float64 scale and int64 zero point per row


def test_token_groups_get_their_own_scale_exactly():
    """Rows whose ranges differ by 2x or more are quantized separately: each equals a one-row call."""
    q = Q.int8_copy(nn.Sequential(nn.Linear(16, 8)), skip=())[0]
    torch.manual_seed(0)
    x = torch.randn(4, 16)
    x *= torch.tensor([[1.0], [100.0], [0.01], [1e4]])  # four ranges 100x apart; row 1 like SmolLM2's first token
    y = q(x)
    for i in range(4):
        assert torch.equal(y[i], q(x[i:i + 1])[0])
    plain = Q.int8_copy(nn.Sequential(nn.Linear(16, 8)), skip=(), token_scales=False)[0]
    plain.load_state_dict(q.state_dict())
    ref = x @ q.weight().dequantize().t() + q.bias()
    # one shared scale for all rows: the small rows drown in the outlier's quantization step
    assert (plain(x)[0] - ref[0]).abs().max() > 10 * (y[0] - ref[0]).abs().max()


def test_3d_inputs_keep_their_shape():
    q = Q.int8_copy(nn.Sequential(nn.Linear(16, 8)), skip=())[0]
    x = torch.randn(2, 5, 16)
    y = q(x)
    assert y.shape == (2, 5, 8)
    assert torch.equal(y.reshape(10, 8), q(x.reshape(10, 16)))


def test_the_cache_builds_once_per_key():
    model = tiny_llama(vocab_size=len(smollm2_tokenizer()))
    Q.clear_cache()
    a, built_a = Q.cached_int8(("k",), model)
    b, built_b = Q.cached_int8(("k",), model)
    assert built_a and not built_b and a is b
    Q.clear_cache()


def test_a_slot_holds_one_int8_copy():
    # the Decoding playground and the Efficiency panel share one int8 copy per role: a new model
    # for the role replaces the old copy instead of adding a second one
    model = nn.Sequential(nn.Linear(16, 8))
    other = nn.Sequential(nn.Linear(16, 8))
    Q.clear_cache()
    a, _ = Q.cached_int8(("m", 1), model, slot="decoder")
    assert Q.cached_count() == 1
    b, built = Q.cached_int8(("m", 2), other, slot="decoder")
    assert built and b is not a and Q.cached_count() == 1
    c, _ = Q.cached_int8(("e", 1), model, slot="embedder")  # another role: its own copy
    assert Q.cached_count() == 2
    again, built = Q.cached_int8(("m", 2), other, slot="decoder")
    assert again is b and not built and c is not b
    Q.clear_cache()
    assert Q.cached_count() == 0


# ---------------------------------------------------------------------------- perplexity


def test_uniform_logits_have_the_vocabulary_size_as_perplexity():
    v = 50
    nll, n = M.nll_from_logits(torch.zeros(7, v), torch.arange(7))
    assert n == 6
    assert math.exp(nll / n) == pytest.approx(v, rel=1e-12)


def test_perplexity_of_a_known_distribution():
    # the target always gets probability 1/4 -> perplexity exactly 4
    logits = torch.full((5, 8), -1e9)
    ids = torch.tensor([0, 1, 2, 3, 4])
    for t in range(4):
        logits[t, :4] = 0.0  # four equal candidates: 0..3
    ids = torch.tensor([0, 1, 2, 3, 0])
    nll, n = M.nll_from_logits(logits, ids)
    assert n == 4 and math.exp(nll / n) == pytest.approx(4.0, rel=1e-12)


class _UniformLM(nn.Module):
    """Predicts every vocabulary entry equally: perplexity = vocabulary size, on any text."""

    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab
        self.dummy = nn.Parameter(torch.zeros(1))

    def forward(self, input_ids):
        return SimpleNamespace(logits=torch.zeros(*input_ids.shape, self.vocab))


def test_perplexity_is_token_weighted_over_texts():
    tok = smollm2_tokenizer()
    texts = ["The cat sat on the mat.", "A much longer sentence, with more tokens, about many more things."]
    r = M.perplexity(_UniformLM(len(tok)), tok, texts)
    lengths = [len(tok(t)["input_ids"]) for t in texts]
    assert r["tokens"] == sum(lengths) - len(texts)
    assert r["perplexity"] == pytest.approx(len(tok), rel=1e-9)
    assert r["per_text"] == [pytest.approx(len(tok), rel=1e-9)] * 2


# ---------------------------------------------------------------------------- agreement


def test_first_divergence():
    assert M.first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert M.first_divergence([1, 2, 3], [1, 9, 3]) == 1
    assert M.first_divergence([5], [6]) == 0
    assert M.first_divergence([1, 2], [1, 2, 3]) == 2  # one stopped early: they differ where it ended
    assert M.first_divergence([], []) is None


def test_agreement_counts_exactly():
    a = [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [7, 7]]
    b = [[1, 2, 3, 4], [1, 2, 9, 4], [1, 2, 3, 5], [7, 7]]
    assert M.agreement(a, b, 2) == 4
    assert M.agreement(a, b, 3) == 3
    assert M.agreement(a, b, 4) == 2
    assert M.agreement(a, b, 32) == 2  # [7, 7] against [7, 7]: both ended at the same point
    with pytest.raises(ValueError):
        M.agreement(a, b[:2], 2)


def test_compare_greedy_interleaves_and_cycles_prompts_for_timing():
    tok = smollm2_tokenizer()
    model = tiny_llama(vocab_size=len(tok), initializer_range=0.3)
    steps = []
    out = M.compare_greedy({"a": model, "b": model}, tok, ["Hello there"], 5, min_timed=3,
                           on_step=lambda d, t: steps.append((d, t)))
    assert steps == [(1, 3), (2, 3), (3, 3)]
    assert len(out["a"]["outputs"]) == 1 and len(out["a"]["tokens_per_s"]) == 3
    assert out["a"]["outputs"] == out["b"]["outputs"]
    # greedy = a hand-written argmax loop
    ids = tok("Hello there", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        for _ in range(5):
            ids = torch.cat([ids, model(input_ids=ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert out["a"]["outputs"][0] == ids[0, -5:].tolist()


def test_shipped_data_has_twenty_texts_topics_and_prompts():
    texts, prompts, topics = M.load_texts(), M.load_prompts(), M.load_topics()
    assert len(texts) == len(prompts) == len(set(topics)) == 20
    assert len(set(texts)) == 20 and len(set(prompts)) == 20
    assert all(len(t.split()) >= 50 for t in texts)


# ---------------------------------------------------------------------------- the entry point


def test_efficiency_entry_point_on_tiny_models(served, folders):
    from backend import hub

    lm = hub.load("decoder")
    before = _snapshot(lm.model)
    seen = []
    r = efficiency.efficiency(prompts=2, texts=2, new_tokens=8, encoder=True, progress=lambda f, d: seen.append(f))
    dec, enc = r["decoder"], r["encoder"]
    assert [row["name"] for row in dec["rows"]] == ["fp32", "int8"]
    assert dec["agreement"]["of"] == 2 and len(dec["prompts"]) == 2
    same8 = sum(p["first_divergence"] is None or p["first_divergence"] >= 8 for p in dec["prompts"])
    assert dec["agreement"]["first_8"] == same8
    assert dec["rows"][1]["memory_mb"] < dec["rows"][0]["memory_mb"]
    assert len(dec["rows"][0]["tokens_per_s_runs"]) == 3  # 2 prompts, cycled to 3 timed runs
    assert len(dec["rows"][0]["perplexity_per_text"]) == 2
    assert dec["int8_built_s"] > 0
    assert r["model"]["checkpoint"] == lm.checkpoint and r["model"]["dtype"] == "float32"
    assert dec["int8_model"]["dtype"].startswith("int8")
    assert enc["tasks"]["topic"]["items"] == 2 and enc["tasks"]["topic"]["labels"] == 20
    assert enc["tasks"]["sentiment"]["items"] > 2
    assert 0.0 <= enc["rows"][1]["agreement"] <= 1.0
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    after = hub.load("decoder").model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # the served model is untouched
    again = efficiency.efficiency(prompts=1, texts=1, new_tokens=8, encoder=False)
    assert again["decoder"]["int8_built_s"] == 0.0 and again["encoder"] is None  # the int8 copy is cached


@pytest.mark.parametrize("kwargs, word", [
    ({"prompts": 0}, "prompts"), ({"prompts": 21}, "prompts"), ({"texts": float("nan")}, "texts"),
    ({"new_tokens": 4}, "new_tokens"), ({"new_tokens": 65}, "new_tokens"), ({"encoder": "maybe"}, "encoder"),
    ({"prompts": "two"}, "prompts"),
])
def test_bad_settings_are_refused_readably(served, kwargs, word):
    with pytest.raises(InputError, match=word):
        efficiency.efficiency(**kwargs)


def test_defaults_are_interactive_sized():
    assert api.DEFAULT_PROMPTS <= 5 and api.DEFAULT_TEXTS <= 5 and api.DEFAULT_NEW_TOKENS == 32


def test_the_int8_speedup_carries_its_interval_and_the_rules_reason():
    from backend.efficiency.api import speed_evidence
    from components.efficiency.ui import speed_text

    clear = speed_evidence([26.1, 27.0, 25.5, 26.6, 26.9, 25.8], [15.2, 15.6, 15.0, 15.5, 15.3, 15.1], "prompts")
    assert clear["claim"]["claimed"] and clear["claim"]["better"] == "int8" and clear["ci95"][0] > 1.6
    said = speed_text({"speedup": clear["ratio"], "speedup_evidence": clear}, "greedy tok/s")
    assert said.startswith(f"**{clear['ratio']:.{clear['decimals']}f}x** greedy tok/s (95% interval") and "not claimed" not in said
    noisy = speed_evidence([10, 30, 12, 28, 11, 29], [20, 14, 25, 13, 22, 15], "prompts")
    assert not noisy["claim"]["claimed"] and noisy["claim"]["reason"] == "overlap"
    assert "not claimed: the speed-up of int8 over fp32" in speed_text({"speedup": noisy["ratio"], "speedup_evidence": noisy}, "x")
    few = speed_evidence([26, 27], [15, 15.5], "prompts")
    assert few["claim"]["reason"] == "too_few" and "only 2 prompts" in few["claim"]["why"]
