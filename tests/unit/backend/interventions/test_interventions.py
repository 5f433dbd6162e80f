"""Interventions on tiny random models: the hooks against an independent mechanism (a deep copy
with edited weights), the parser, the sweep's ranking, and hooks always removed."""

from __future__ import annotations

import copy
import threading

import pytest
import torch

from backend.runtime import budget
from backend.runtime.errors import InputError
from backend.interventions import effects, hooks, spec, sweep
from tests.helpers.tiny_models import tiny_bert, tiny_gpt2, tiny_llama

TOL = 1e-5
IDS = torch.tensor([[101, 2051, 10029, 2066, 2019, 8612, 1012, 102]])
MAKERS = {"bert": tiny_bert, "llama": lambda: tiny_llama(initializer_range=0.3), "gpt2": tiny_gpt2}


@pytest.fixture(scope="module")
def models():
    return {name: make() for name, make in MAKERS.items()}


def out(model) -> torch.Tensor:
    """What we compare: logits for a language model, the last hidden state for an encoder."""
    with torch.inference_mode():
        o = model(input_ids=IDS, attention_mask=torch.ones_like(IDS))
    return (o.logits if hasattr(o, "logits") else o.last_hidden_state)[0]


def edits_for(model, text: str) -> list[spec.Edit]:
    lay = hooks.layout(model)
    return spec.resolve(spec.parse(text), len(lay.layers), lay.n_heads)


def no_hooks_left(model) -> bool:
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


# ----------------------------------------------------------------------------- the mechanism
@pytest.mark.parametrize("fam", MAKERS)
def test_an_empty_spec_changes_nothing_exactly(models, fam):
    m = models[fam]
    base = out(m)
    with hooks.ablate(m, edits_for(m, "")):
        same = out(m)
    assert torch.equal(base, same)  # exactly 0, not "small"
    with hooks.ablate(m, edits_for(m, "L0H1*1, L1.mlp*1")):  # a factor of 1 is no change either
        assert torch.equal(out(m), base)


@pytest.mark.parametrize("fam", MAKERS)
@pytest.mark.parametrize("text", ["L1H2=0", "L0H0=0", "L0H3*0.3", "L1H1*-2.5, L0H2=0", "L0.attn=0", "L1.mlp*0.7",
                                  "L0H1=0, L0.attn*0.5, L1.mlp=0"])
def test_hooks_equal_a_copy_with_edited_weights(models, fam, text):
    m = models[fam]
    edits = edits_for(m, text)
    base = out(m)
    with hooks.ablate(m, edits):
        hooked = out(m)
    copied = out(hooks.edited_copy(m, edits))
    with hooks.edited_weights(m, edits):
        weighted = out(m)
    assert (hooked - base).abs().max() > 1e-4, "the edit changed nothing: the comparison would prove nothing"
    assert (hooked - copied).abs().max() < TOL
    assert (hooked - weighted).abs().max() < TOL
    assert torch.equal(out(m), base) and no_hooks_left(m)


@pytest.mark.parametrize("fam", MAKERS)
def test_the_check_tells_heads_apart(models, fam):
    """A copy with another head removed is far from the hooks' result: the equality is not vacuous."""
    m = models[fam]
    with hooks.ablate(m, edits_for(m, "L1H2=0")):
        hooked = out(m)
    other = out(hooks.edited_copy(m, edits_for(m, "L1H1=0")))
    assert (hooked - other).abs().max() > 1e-4


@pytest.mark.parametrize("fam", MAKERS)
def test_removing_every_head_of_a_layer_and_every_mlp_changes_the_output(models, fam):
    m = models[fam]
    base = out(m)
    for text in ["L0H*=0", "L1H*=0", "L0.mlp=0, L1.mlp=0"]:
        with hooks.ablate(m, edits_for(m, text)):
            assert (out(m) - base).abs().max() > 1e-3, text


@pytest.mark.parametrize("fam", MAKERS)
def test_every_head_removed_equals_the_attention_sublayer_removed_up_to_its_bias(models, fam):
    """Zeroing all heads leaves only the output projection's bias; zeroing the sub-layer removes that too.
    Llama's o_proj has no bias, so there the two are the same intervention."""
    m = copy.deepcopy(models[fam])
    proj = hooks.layout(m).layers[1].o_proj
    if proj.bias is not None:  # random init leaves biases at 0: give it one, or the test proves nothing
        with torch.no_grad():
            proj.bias.fill_(0.1)
    with hooks.ablate(m, edits_for(m, "L1H*=0")):
        heads = out(m)
    with hooks.ablate(m, edits_for(m, "L1.attn=0")):
        sub = out(m)
    if fam == "llama":
        assert (heads - sub).abs().max() < TOL
    else:
        assert (heads - sub).abs().max() > 0


def test_a_sublayer_removed_adds_nothing_to_the_residual_stream(models):
    m = models["llama"]
    seen = {}
    block = m.model.layers[1]
    h = block.register_forward_hook(
        lambda mod, a, o: seen.update(inp=a[0].clone(), out=(o[0] if isinstance(o, tuple) else o).clone()))
    try:
        with hooks.ablate(m, edits_for(m, "L1.attn=0, L1.mlp=0")):
            out(m)
    finally:
        h.remove()
    assert torch.equal(seen["inp"], seen["out"])  # the block is the identity on the residual stream


def test_hooks_are_removed_after_an_exception(models):
    m = models["llama"]
    base = out(m)
    with pytest.raises(RuntimeError, match="boom"):
        with hooks.ablate(m, edits_for(m, "L0H*=0, L1.mlp=0")):
            assert not no_hooks_left(m)
            raise RuntimeError("boom")
    assert no_hooks_left(m) and torch.equal(out(m), base)
    with pytest.raises(budget.BudgetExceeded):
        with budget.scope(seconds=1e-9):
            with hooks.edited_weights(m, edits_for(m, "L1H0=0")):
                budget.check("one forward")
    assert no_hooks_left(m)


def test_hooks_act_only_in_the_thread_that_set_them(models):
    """Another request using the same shared model at the same time sees it unchanged."""
    m = models["llama"]
    base = out(m)
    seen = {}
    with hooks.ablate(m, edits_for(m, "L0H*=0, L1.mlp=0")):
        t = threading.Thread(target=lambda: seen.update(other=out(m)))
        t.start()
        t.join()
        mine = out(m)
    assert torch.equal(seen["other"], base) and not torch.equal(mine, base)


def test_an_unknown_architecture_is_refused():
    from transformers import DistilBertConfig, DistilBertModel

    m = DistilBertModel(DistilBertConfig(vocab_size=100, dim=32, n_layers=1, n_heads=2, hidden_dim=37))
    with pytest.raises(InputError, match="BERT, Llama and GPT-2"):
        hooks.layout(m)


def test_layout_of_the_tiny_models(models):
    assert [(hooks.layout(models[f]).family, len(hooks.layout(models[f]).layers), hooks.layout(models[f]).n_heads,
             hooks.layout(models[f]).head_dim) for f in MAKERS] == [("bert", 2, 4, 8), ("llama", 2, 6, 8),
                                                                    ("gpt2", 2, 4, 8)]


# ----------------------------------------------------------------------------- the parser
def test_parse_reads_every_form():
    edits = spec.parse("L2H3=0, l5h1*0.5; L3.mlp=0\nL4.attn = 0, L1H*=0, L0H2, L6.ffn*2, L7.attention x 0.25")
    assert [e.label for e in edits] == ["L2H3=0", "L5H1*0.5", "L3.mlp=0", "L4.attn=0", "L1H*=0", "L0H2=0",
                                        "L6.mlp*2", "L7.attn*0.25"]
    assert spec.parse("") == [] and spec.parse("  ") == [] and spec.parse(None) == []
    assert [e.label for e in spec.parse(["L0H1=0", "L1.mlp*0.5"])] == ["L0H1=0", "L1.mlp*0.5"]
    assert spec.canonical(spec.parse("l2h3 = 0 ,L0.MLP*.5")) == "L2H3=0, L0.mlp*0.5"


@pytest.mark.parametrize("text,message", [
    ("L2H3=1", r"'=' only sets to 0"),
    ("head 3", "Cannot read 'head 3'"),
    ("L2H3=0 L4H1=0", "Cannot read"),
    ("L2.ln=0", "Cannot read"),
    ("L2H3*nan", "Cannot read"),
    ("L2H3*1e9", "finite number between"),
    ("L-1H0=0", "Cannot read"),
    (42, "spec must be text"),
    ([1, 2], "spec must be text"),
    ("L0H0=0," * 400, "characters long"),
    (", ".join(f"L0H{i}=0" for i in range(65)), "at most 64"),
])
def test_parse_errors_are_readable(text, message):
    with pytest.raises(InputError, match=message):
        spec.parse(text)


@pytest.mark.parametrize("text,message", [
    ("L6H0=0", "layer 6 does not exist; this model has layers 0 to 5"),
    ("L0H12=0", "head 12 does not exist; each layer has heads 0 to 11"),
    ("L0H1=0, L0H1*0.5", "changes L0H1 again"),
    ("L0H*=0, L0H3=0", "changes L0H3 again"),
    ("L2.mlp=0, L2.mlp*2", "changes L2.mlp again"),
])
def test_resolve_checks_the_model_bounds(text, message):
    with pytest.raises(InputError, match=message):
        spec.resolve(spec.parse(text), 6, 12)


def test_resolve_expands_every_head():
    edits = spec.resolve(spec.parse("L1H*=0, L0.attn=0"), 2, 3)
    assert [e.label for e in edits] == ["L1H0=0", "L1H1=0", "L1H2=0", "L0.attn=0"]


# ----------------------------------------------------------------------------- effects and the sweep
def test_kl_is_zero_for_the_same_distribution_and_positive_otherwise():
    a = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    assert effects.kl(a, a).tolist() == [0.0, 0.0]
    b = torch.tensor([[3.0, 2.0, 1.0], [0.0, 0.0, 5.0]])
    p = torch.softmax(a.double(), -1)
    expected = (p * (p.log() - torch.log_softmax(b.double(), -1))).sum(-1)
    assert torch.allclose(effects.kl(a, b), expected) and (effects.kl(a, b) > 0).all()


def test_rank_breaks_ties_by_head_index():
    rows = [{"head": 3, "score": 0.5}, {"head": 1, "score": 0.5}, {"head": 0, "score": 0.1}, {"head": 2, "score": 0.9}]
    assert [r["head"] for r in sweep.rank(rows, "score")] == [2, 1, 3, 0]
    assert [r["rank"] for r in sweep.rank(rows, "score")] == [1, 2, 3, 4]


@pytest.mark.parametrize("fam", ["llama", "bert"])
def test_the_sweep_is_deterministic_and_measures_each_head_alone(models, fam):
    m = models[fam]
    decoder = fam != "bert"
    run = (lambda: effects.decoder_run(m, IDS).out) if decoder else (lambda: effects.encoder_run(m, {"input_ids": IDS}).out)
    first = sweep.sweep_layer(m, 1, run, decoder)
    second = sweep.sweep_layer(m, 1, run, decoder)
    strip = lambda r: [(h["head"], h["score"], h["rank"]) for h in r["heads"]]  # noqa: E731
    assert strip(first) == strip(second) and first["complete"] and first["measured"] == hooks.layout(m).n_heads
    scores = [h["score"] for h in first["heads"]]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    top = first["heads"][0]["head"]  # the top head's score is what removing it alone does
    base = run()
    with hooks.ablate(m, edits_for(m, f"L1H{top}=0")):
        after = run()
    alone = float(effects.kl(base, after)[-1]) if decoder else \
        1 - effects.cosine(effects.sentence_vector(base), effects.sentence_vector(after))
    assert alone == pytest.approx(first["heads"][0]["score"], abs=1e-12)
    assert no_hooks_left(m)


def test_the_sweep_stops_at_the_budget_with_what_it_measured(models):
    m = models["llama"]
    with budget.scope(seconds=1e-9):
        r = sweep.sweep_layer(m, 0, lambda: effects.decoder_run(m, IDS).out, True)
    assert r["complete"] is False and r["finish_reason"] == "time budget" and r["measured"] < r["num_heads"]
    assert no_hooks_left(m)


def test_greedy_continuation_under_hooks_uses_the_cache_consistently(models):
    """The cached greedy tokens equal argmax of a full forward over text + tokens, with the hooks on."""
    m = models["llama"]
    edits = edits_for(m, "L0H1=0, L1.mlp*0.5")
    with hooks.ablate(m, edits):
        run = effects.decoder_run(m, IDS, 5, eos=None)
        full = torch.cat([IDS, torch.tensor([run.continuation])], 1)
        logits = out_of(m, full)
    assert len(run.continuation) == 5
    predicted = logits[IDS.shape[1] - 1:-1].argmax(-1).tolist()
    assert predicted == run.continuation


def out_of(model, ids):
    with torch.inference_mode():
        return model(input_ids=ids).logits[0]


def test_the_check_tolerance_is_absolute_for_removal_and_relative_for_other_factors():
    ref = torch.tensor([[3.0, -40.0]])
    assert effects.tolerance(spec.parse("L0H1=0, L1.mlp=0"), ref) == 1e-5
    assert effects.tolerance(spec.parse("L0H1*1"), ref) == 1e-5
    assert effects.tolerance(spec.parse("L0H1*0.3"), ref) == pytest.approx(4e-4)
    assert effects.tolerance(spec.parse("L0H1*0.3"), torch.tensor([[0.1]])) == 1e-5


@pytest.mark.parametrize("fam", ["llama", "bert"])
def test_head_h_is_the_head_whose_attention_weights_the_model_reports(models, fam):
    """The slice the hooks zero for head h is that head's output: its attention weights (the
    model's own `attentions`, what the Attention tab draws) times its values. Both mechanisms
    share the slicing, so this pins the head index to the model's own independently."""
    m = models[fam]
    lay = hooks.layout(m)
    layer = 1
    block = m.model.layers[layer].self_attn if fam == "llama" else m.encoder.layer[layer].attention.self
    v_proj = block.v_proj if fam == "llama" else block.value
    seen = {}
    handles = [v_proj.register_forward_hook(lambda mod, a, o: seen.update(v=o.detach().clone())),
               lay.layers[layer].o_proj.register_forward_pre_hook(lambda mod, a: seen.update(x=a[0].detach().clone()))]
    try:
        with torch.inference_mode():
            o = m(input_ids=IDS, attention_mask=torch.ones_like(IDS), output_attentions=True)
    finally:
        for h in handles:
            h.remove()
    weights = o.attentions[layer][0]  # (heads, T, T)
    d = lay.head_dim
    groups = lay.n_heads // (seen["v"].shape[-1] // d)  # grouped-query attention: heads share a value head
    for head in range(lay.n_heads):
        kv = head // groups
        mine = weights[head] @ seen["v"][0, :, kv * d:(kv + 1) * d]
        assert (seen["x"][0, :, head * d:(head + 1) * d] - mine).abs().max() < 1e-5, head
