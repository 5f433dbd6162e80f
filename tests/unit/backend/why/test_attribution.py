"""The Why tab's backend on tiny random models: each method against what it promises, the checks
against the library or arithmetic they stand for, and /attribute's refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from backend.why import api, checks, methods, tasks
from backend.why.targets import Target
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import minilm_tokenizer, smollm2_tokenizer, tiny_bert, tiny_llama

TEXT = "I loved this wonderful movie, truly."


@pytest.fixture(scope="module")
def tiny_classifier():
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=minilm_tokenizer().vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37, num_labels=2)
    return BertForSequenceClassification(cfg).eval()


class Additive(nn.Module):
    """f(ids) = sum of one weight per present token: every method's right answer is known."""

    def __init__(self, vocab: int):
        super().__init__()
        torch.manual_seed(1)
        self.embed_tokens = nn.Embedding(vocab, 1)

    def forward(self, ids, mask):
        return (self.embed_tokens(ids)[..., 0] * mask).sum(-1)


def additive_target(ids: list[int]) -> tuple[Target, Additive]:
    model = Additive(50)
    t = Target(model, ids, list(range(1, len(ids) - 1)), lambda i, m, f: model(i, m), "sum", baseline_id=0)
    return t, model


def test_on_an_additive_model_every_method_returns_the_token_weights():
    ids = [1, 7, 9, 13, 21, 2]
    t, model = additive_target(ids)
    w = model.embed_tokens.weight[:, 0].detach().numpy().astype(np.float64)
    expected = w[ids[1:-1]]
    assert np.allclose(methods.gradient_x_input(t), expected, atol=1e-6)
    assert np.allclose(methods.occlusion(t), expected, atol=1e-6)
    ig, comp = methods.integrated_gradients(t, n_steps=8)
    assert np.allclose(ig, expected - w[0], atol=1e-5)  # from the [PAD]-id baseline
    assert comp["relative_gap"] < 1e-4


def test_occlusion_is_the_change_when_the_token_is_removed(tiny_classifier):
    t, info = tasks.classifier(tiny_classifier, minilm_tokenizer(), TEXT)
    occ = methods.occlusion(t)
    for j, p in enumerate(t.positions[:4]):
        kept = [x for i, x in enumerate(t.ids) if i != p]
        with torch.no_grad():
            probs = tiny_classifier(input_ids=torch.tensor([kept])).logits.softmax(-1)[0]
        assert occ[j] == pytest.approx(t.value() - float(probs[info["labels"].index(info["label"])]), abs=1e-6)


def test_integrated_gradients_are_complete_on_a_classifier(tiny_classifier):
    t, _ = tasks.classifier(tiny_classifier, minilm_tokenizer(), TEXT)
    _, comp = methods.integrated_gradients(t, n_steps=32)
    assert comp["difference"] == pytest.approx(comp["f_input"] - comp["f_baseline"])
    assert comp["gap"] <= 0.05 * abs(comp["difference"]) + 1e-7
    assert t.baseline_ids()[0, 0] == t.ids[0] and t.baseline_ids()[0, -1] == t.ids[-1]  # [CLS]/[SEP] kept


def test_the_explained_label_can_be_chosen(tiny_classifier):
    t, info = tasks.classifier(tiny_classifier, minilm_tokenizer(), TEXT, label="label_1")
    assert info["label"] == "LABEL_1" and t.value() == pytest.approx(info["probabilities"]["LABEL_1"], abs=1e-5)
    with pytest.raises(InputError, match="not one of this model's labels"):
        tasks.classifier(tiny_classifier, minilm_tokenizer(), TEXT, label="happy")


def test_next_token_with_a_contrast_is_a_logit_difference():
    model, tok = tiny_llama(), smollm2_tokenizer()
    t, info = tasks.next_token(model, tok, "The capital of France is", target="Paris", contrast="London")
    ids = torch.tensor([tok("The capital of France is")["input_ids"]])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, -1]
    paris, london = tok(" Paris")["input_ids"][0], tok(" London")["input_ids"][0]
    assert info["target"]["id"] == paris and info["contrast"]["id"] == london
    assert t.value() == pytest.approx(float(logits[paris] - logits[london]), abs=1e-4)
    occ = methods.occlusion(t)
    keep = np.ones((1, len(t.positions)), bool)
    keep[0, -1] = False  # removing the last prompt token: the next token is read one position earlier
    with torch.no_grad():
        short = model(input_ids=ids[:, :-1]).logits[0, -1]
    assert occ[-1] == pytest.approx(t.value() - float(short[paris] - short[london]), abs=1e-4)
    with pytest.raises(InputError, match="contrast token is the target"):
        tasks.next_token(model, tok, "The capital of France is", target="Paris", contrast=" Paris")


def test_ner_target_keeps_its_token_and_follows_it_when_others_go():
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=minilm_tokenizer().vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=37, num_labels=3,
                     id2label={0: "O", 1: "B-PER", 2: "I-PER"})
    model = BertForTokenClassification(cfg).eval()
    text = "Angela Merkel visited Paris."
    t, info = tasks.token_label(model, minilm_tokenizer(), text, char=text.index("Paris"))
    assert info["focus"]["token"] == "paris" or info["focus"]["token"].lower() == "paris"
    assert t.focus not in t.positions
    occ = methods.occlusion(t)
    first = t.positions[0]
    kept = [x for i, x in enumerate(t.ids) if i != first]
    with torch.no_grad():
        probs = model(input_ids=torch.tensor([kept])).logits[0, t.focus - 1].softmax(-1)
    label = info["labels"].index(info["label"])
    assert occ[0] == pytest.approx(t.value() - float(probs[label]), abs=1e-6)


def test_similarity_target_matches_the_pipeline_scores():
    from backend.engines.classify import similarity as sim

    model, tok = tiny_bert(), minilm_tokenizer()
    desc = {"praise": "This is praise.", "complaint": "This is a complaint."}
    t, info = tasks.similarity(model, tok, "the food was cold", desc)
    direct = sim.classify_by_similarity(model, tok, ["the food was cold"], desc)[0]
    top = direct["labels"][0]
    assert info["label"] == top and t.value() == pytest.approx(direct["scores"][0], abs=1e-5)


def test_rollout_is_the_recipe():
    rng = np.random.default_rng(0)
    layers = [rng.random((4, 4)) for _ in range(3)]
    layers = [a / a.sum(-1, keepdims=True) for a in layers]
    expected = np.eye(4)
    for a in layers:
        expected = ((a + np.eye(4)) / 2) @ expected
    got = methods.rollout_matrix(layers)
    assert np.allclose(got, expected) and np.allclose(got.sum(-1), 1.0)


def test_attention_scores_leave_the_model_as_it_was(tiny_classifier):
    t, _ = tasks.classifier(tiny_classifier, minilm_tokenizer(), TEXT)
    before = tiny_classifier.config._attn_implementation
    rolled, last = methods.attention_scores(t)
    assert tiny_classifier.config._attn_implementation == before
    assert not tiny_classifier.config.output_attentions
    assert len(rolled) == len(last) == len(t.positions) and (rolled > 0).all()


def test_spearman_and_ranks_agree_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.integers(0, 5, 12).astype(float)  # ties on purpose
        b = rng.normal(size=12)
        assert checks.spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
        assert np.allclose(checks._average_ranks(a), stats.rankdata(a))
    assert checks.spearman(np.ones(4), np.arange(4.0)) is None


def test_top_k_overlap_and_removal_counts():
    assert checks.top_k_overlap(np.array([3, 2, 1, 0.0]), np.array([3, 0, 1, 2.0]), k=2) == 0.5
    assert checks.removal_counts(5) == [0, 1, 2, 3, 4, 5]
    long = checks.removal_counts(128)
    assert long[:5] == [0, 1, 2, 3, 4] and long[-1] == 128 and len(long) <= checks.MAX_POINTS + 1


def test_deletion_ranks_the_true_order_first():
    t, model = additive_target([1, 7, 9, 13, 21, 30, 31, 40, 2])
    w = model.embed_tokens.weight[:, 0].detach().numpy().astype(np.float64)[t.ids[1:-1]]
    dl = checks.deletion(t, {"truth": w, "reversed": -w}, random_orders=5)
    assert dl["ranking"] == ["truth", "reversed"]
    assert dl["area_over_random"]["truth"] > 0 > dl["area_over_random"]["reversed"]
    assert dl["curves"]["truth"][-1] == pytest.approx(dl["random_mean"][-1])  # all removed: the same input


def test_attribute_refuses_bad_arguments_before_loading_a_model(monkeypatch):
    monkeypatch.setattr(api.hub, "load", lambda *a, **k: pytest.fail("loaded a model for a refused request"))
    with pytest.raises(InputError, match="Unknown task"):
        api.attribute("x", task="poetry")
    with pytest.raises(InputError, match="methods: unknown attribution method"):
        api.attribute("x", methods="lime")
    with pytest.raises(InputError, match="candidate labels"):
        api.attribute("x", task="zero_shot")
    with pytest.raises(InputError, match="does not occur"):
        api.attribute("Angela visited Paris", task="ner", word="Berlin")
    with pytest.raises(InputError):
        api.attribute("x", steps=float("nan"))


def test_attribute_returns_plain_json(monkeypatch, tiny_classifier):
    import json
    from backend.runtime import config

    class LM:
        model, tokenizer, method = tiny_classifier, minilm_tokenizer(), config.METHOD_MODEL

        @staticmethod
        def describe():
            return {"checkpoint": "tiny", "source": "test"}

    monkeypatch.setattr(api.hub, "load", lambda *a, **k: LM)
    r = api.attribute(TEXT, task="sentiment", steps=8, random_orders=2)
    json.dumps(r)
    assert r["methods"] == list(methods.METHODS) and len(r["tokens"]) == len(r["scores"]["occlusion"])
    claim = r["checks"]["faithfulness"]  # named only where its conditions hold; else it says why not
    assert r["checks"]["most_faithful"] == claim["method"] and claim["text"]
    assert (claim["method"] in api.EXPLANATIONS) == (claim["status"] == "claimed")
    assert "last_layer_attention" not in r["checks"]["deletion"]["ranking"]
    assert set(r["checks"]["meanings"]) == {"completeness", "deletion", "agreement"}
    assert r["tokens"][0]["token"] == TEXT[r["tokens"][0]["start"]:r["tokens"][0]["end"]]
    with pytest.raises(InputError, match="at most 128 tokens"):
        api.attribute("word " * 200, task="sentiment")


def test_a_session_classifier_is_explained_with_the_probabilities_predict_trained_gives(monkeypatch):
    """Both of a Train-tab session's classifiers, as the Why tab gets them through session_models."""
    from backend import hub, train  # noqa: F401  (registers the provider)
    from backend.engines.classify import finetune
    from backend.hub import session_models
    from backend.train import use
    from backend.train.probe import Probe
    from backend.train.store import Trained, get_store

    encoder, tok = tiny_bert(), minilm_tokenizer()

    class LM:
        model, tokenizer, device, checkpoint = encoder, tok, "cpu", "tiny"

    monkeypatch.setattr(hub, "load", lambda *a, **k: LM)
    rng = np.random.default_rng(0)
    probe = Probe(mean=rng.normal(size=32).astype(np.float32), scale=np.full(32, 0.5, np.float32),
                  weight=rng.normal(size=(32, 2)).astype(np.float32), bias=np.zeros(2, np.float32))
    torch.manual_seed(0)
    weights = {k: v.clone() for k, v in finetune.EncoderClassifier(tiny_bert(seed=3), 2).state_dict().items()}
    t = Trained(labels=["neg", "pos"], dataset={"name": "tiny"}, checkpoint="tiny", override=None, probe=probe,
                weights=weights, best="probe")
    get_store().session("why-test").trained = t
    try:
        for method in ("probe", "finetune"):
            found = session_models.serve(api.SESSION_PROVIDER, "why-test", method)
            target, info = tasks.classifier(found["model"], found["tokenizer"], TEXT)
            expected = use.probabilities(t, method, [TEXT])[0]
            assert info["probabilities"]["neg"] == pytest.approx(float(expected[0]), abs=1e-4), method
            assert found["describe"]["source"] == "session"
        r = api.attribute(TEXT, task="session", session_id="why-test", methods=["occlusion"], random_orders=1)
        assert r["model"]["trained_method"] == "probe" and len(r["scores"]["occlusion"]) == len(r["tokens"])
        with pytest.raises(InputError, match="no trained classifier"):
            api.attribute(TEXT, task="session", session_id="nobody-here")
    finally:
        get_store().drop("why-test")


def test_integrated_gradients_run_again_with_more_steps_when_the_gap_is_large(monkeypatch, tiny_classifier):
    calls = []
    real = methods.integrated_gradients

    def fake(target, steps, **kw):
        scores, comp = real(target, steps, **kw)
        calls.append(steps)
        comp["relative_gap"] = 0.2 if steps < 64 else 0.01  # pretend 32 steps were not enough
        return scores, comp

    monkeypatch.setattr(api.mth, "integrated_gradients", fake)
    t, _ = tasks.classifier(tiny_classifier, minilm_tokenizer(), TEXT)
    _, comp = api._integrated_gradients(t, 32)
    assert calls == [32, 64] and comp["steps"] == 64
    assert comp["first_try"] == {"steps": 32, "relative_gap": 0.2}
