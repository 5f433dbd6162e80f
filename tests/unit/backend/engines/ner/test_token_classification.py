"""Token classification (the offline NER model's server): sub-word alignment, seqeval-style
entity F1, word shapes, the training loop, save/load, and the served model in transformers'
token-classification pipeline. Tiny random BERT, the real MiniLM tokenizer."""

from __future__ import annotations

import pytest
import torch

from backend.engines.ner import data as ner_data, metrics as ner_metrics
from backend.engines.ner import token_classification as tc
from backend.engines.ner import serving
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import minilm_tokenizer, tiny_bert

pytestmark = pytest.mark.unit

LABELS = ner_data.bio_labels()
L2I = {l: i for i, l in enumerate(LABELS)}


# ----------------------------------------------------------------------------- alignment
def test_first_piece_of_each_word_carries_its_label_and_the_rest_are_ignored():
    tok = minilm_tokenizer()
    words = ["Angela", "Merkel", "visited", "Reykjavik", "."]
    tags = ["B-PER", "I-PER", "O", "B-LOC", "O"]
    enc, word_ids = ner_data.encode(tok, [words])
    pieces = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
    assert len(pieces) > len(words) + 2  # some word is split into pieces (Reykjavik, Merkel)
    labels = ner_data.align_labels(word_ids[0], [L2I[t] for t in tags])
    assert labels[0] == labels[-1] == ner_data.IGNORE  # [CLS], [SEP]
    kept = [(p, LABELS[l]) for p, l in zip(pieces, labels) if l != ner_data.IGNORE]
    assert [LABELS[L2I[t]] for t in tags] == [l for _, l in kept]
    assert not any(p.startswith("##") for p, _ in kept)
    assert all(l == ner_data.IGNORE for p, l in zip(pieces, labels) if p.startswith("##"))
    assert ner_data.first_piece_mask(word_ids[0]).count(True) == len(words)


def test_make_batch_pads_labels_and_shapes_to_the_batch_width():
    tok = minilm_tokenizer()
    sents = [["Paris", "is", "big"], ["The", "UN", "met", "in", "2024", "!"]]
    tags = [["B-LOC", "O", "O"], ["O", "B-ORG", "O", "O", "O", "O"]]
    batch, word_ids = tc.make_batch(tok, sents, L2I, tags, shapes=True)
    assert batch["labels"].shape == batch["input_ids"].shape == batch["shape_ids"].shape
    assert (batch["labels"][0] != ner_data.IGNORE).sum() == 3 and (batch["labels"][1] != ner_data.IGNORE).sum() == 6
    first = ner_data.first_piece_mask(word_ids[1])
    shapes = [s for s, f in zip(batch["shape_ids"][1].tolist(), first) if f]
    assert [tc.SHAPES[s] for s in shapes] == ["Capitalised", "ALLCAPS", "lower", "lower", "digit", "punct"]


@pytest.mark.parametrize("word,shape", [("merkel", "lower"), ("Merkel", "Capitalised"), ("NATO", "ALLCAPS"),
                                        ("I", "Capitalised"), ("2024", "digit"), ("G7", "digit"), (",", "punct"),
                                        ("iPhone", "other"), ("'s", "lower"), ("U.S.", "ALLCAPS"), ("Élysée", "Capitalised")])
def test_word_shape(word, shape):
    assert tc.SHAPES[tc.word_shape(word)] == shape


# ----------------------------------------------------------------------------- metrics
@pytest.mark.parametrize("tags,expected", [
    (["B-PER", "I-PER", "O", "B-LOC"], [("PER", 0, 1), ("LOC", 3, 3)]),
    (["O", "I-PER", "I-PER", "O"], [("PER", 1, 2)]),  # I- without B- starts an entity (seqeval default)
    (["B-PER", "I-LOC", "I-LOC"], [("PER", 0, 0), ("LOC", 1, 2)]),  # a change of type ends one
    (["B-PER", "B-PER", "I-PER"], [("PER", 0, 0), ("PER", 1, 2)]),
    (["I-ORG"], [("ORG", 0, 0)]),
    (["O", "O"], []),
    ([], []),
])
def test_entities_follow_the_conlleval_chunk_rules(tags, expected):
    assert ner_metrics.entities(tags) == expected


def test_report_matches_seqeval_on_its_readme_example():
    gold = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    pred = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    rep = ner_metrics.report(gold, pred)
    assert rep["overall"]["f1"] == pytest.approx(0.5)  # seqeval.metrics.f1_score -> 0.50
    assert rep["per_type"]["MISC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "predicted": 1,
                                       "correct": 0}
    assert rep["per_type"]["PER"]["f1"] == 1.0


def test_report_counts_a_wrong_type_or_a_wrong_edge_as_a_miss_and_micro_averages():
    gold = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG"]]
    pred = [["B-PER", "O", "O", "B-ORG", "O", "B-ORG"]]  # PER span too short, LOC typed as ORG
    rep = ner_metrics.report(gold, pred)
    assert rep["overall"]["correct"] == 1 and rep["overall"]["predicted"] == 3 and rep["overall"]["support"] == 3
    assert rep["overall"]["f1"] == pytest.approx(1 / 3)
    assert rep["per_type"]["ORG"]["precision"] == 0.5 and rep["per_type"]["ORG"]["recall"] == 1.0
    assert rep["per_type"]["LOC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "predicted": 0,
                                      "correct": 0}
    assert ner_metrics.report([["O"]], [["O"]])["overall"]["f1"] == 0.0  # nothing to find: 0, not an error
    with pytest.raises(ValueError):
        ner_metrics.report([["O", "O"]], [["O"]])


def test_confusion_and_hardest_sentences():
    gold = [["B-PER", "O"], ["B-LOC", "O"]]
    pred = [["B-PER", "O"], ["B-ORG", "O"]]
    m = ner_metrics.confusion(gold, pred, LABELS)
    assert m[L2I["B-LOC"]][L2I["B-ORG"]] == 1 and m[L2I["O"]][L2I["O"]] == 2 and sum(map(sum, m)) == 4
    worst = ner_metrics.hardest([0.1, 2.0], [["a", "b"], ["c", "d"]], gold, pred, k=1)
    assert [w["index"] for w in worst] == [1] and worst[0]["pred"] == ["B-ORG", "O"]


# ----------------------------------------------------------------------------- training
SENTS = [
    ner_data.Sentence(["Angela", "Merkel", "visited", "Paris", "."], ["B-PER", "I-PER", "O", "B-LOC", "O"]),
    ner_data.Sentence(["Google", "opened", "an", "office", "in", "Berlin"], ["B-ORG", "O", "O", "O", "O", "B-LOC"]),
    ner_data.Sentence(["the", "weather", "was", "fine"], ["O", "O", "O", "O"]),
    ner_data.Sentence(["Marie", "Curie", "worked", "in", "Warsaw"], ["B-PER", "I-PER", "O", "O", "B-LOC"]),
]


@pytest.mark.parametrize("shape_dim", [0, 8])
def test_the_loop_lowers_the_loss_and_keeps_the_best_validation_state(shape_dim):
    tok = minilm_tokenizer()
    model = tc.new_model(tiny_bert(), len(LABELS), seed=0, shape_dim=shape_dim)
    recipe = tc.Recipe(epochs=12, batch_size=2, learning_rate=3e-3, warmup=0.1, dropout=0.0, shape_dim=shape_dim,
                       freeze_word_embeddings=False)
    out = tc.train(model, tok, SENTS, SENTS[:2], LABELS, recipe)
    assert out.steps == out.total_steps == recipe.steps(len(SENTS)) == 24
    assert sum(out.losses[-4:]) / 4 < 0.5 * sum(out.losses[:2]) / 2
    assert len(out.evals) == 12 and out.best_val["overall"]["f1"] == max(e["f1"] for e in out.evals)
    state = model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in out.weights.items())  # the best state is loaded back
    pred = tc.predict(model, tok, [s.tokens for s in SENTS], LABELS)
    assert [len(p["tags"]) for p in pred] == [len(s.tokens) for s in SENTS]
    for p in pred:
        for e in p["entities"]:
            assert 0.0 < e["score"] <= 1.0 and e["text"] == " ".join(p["tokens"][e["start"]:e["end"]])


def test_frozen_word_embeddings_do_not_move_and_the_schedule_is_fixed():
    tok = minilm_tokenizer()
    model = tc.new_model(tiny_bert(), len(LABELS), seed=0)
    before = model.encoder.embeddings.word_embeddings.weight.detach().clone()
    tc.train(model, tok, SENTS, SENTS[:1], LABELS, tc.Recipe(epochs=1, batch_size=2, learning_rate=1e-3))
    assert torch.equal(before, model.encoder.embeddings.word_embeddings.weight)
    assert tc.schedule(5, 2, 2, seed=1) == tc.schedule(5, 2, 2, seed=1)
    assert sorted(i for b in tc.schedule(5, 2, 1, seed=1) for i in b) == list(range(5))
    assert [round(tc.lr_factor(s, 10, 0.2), 2) for s in range(10)] == [0.5, 1.0, 1.0, 0.88, 0.75, 0.62, 0.5, 0.38,
                                                                       0.25, 0.12]


def test_save_load_round_trip_gives_the_same_predictions(tmp_path):
    tok = minilm_tokenizer()
    model = tc.new_model(tiny_bert(), len(LABELS), seed=3, shape_dim=4).eval()
    with torch.no_grad():
        model.shapes.weight.normal_()  # a shape embedding that matters
    tc.save_folder(tmp_path, model, tok, LABELS, tc.Recipe(shape_dim=4))
    loaded, tok2, labels = tc.load_folder(tmp_path)
    assert labels == LABELS and loaded.shape_dim == 4
    batch, _ = tc.make_batch(tok, [s.tokens for s in SENTS], shapes=True)
    with torch.no_grad():
        torch.testing.assert_close(tc._forward(model, batch), tc._forward(loaded, batch))
    assert tok2("Paris")["input_ids"] == tok("Paris")["input_ids"]


# ----------------------------------------------------------------------------- serving
def test_continuation_pieces_get_their_words_first_piece_tag_as_inside():
    tok = minilm_tokenizer()
    enc = tok(["Kwiatkowski is cold"], return_tensors="pt")
    pieces = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
    cont = [p.startswith("##") for p in pieces]
    assert any(cont)
    logits = torch.randn(1, len(pieces), len(LABELS))
    logits[0, 1, L2I["B-LOC"]] = 9.0  # the first piece of Kwiatkowski (kw ##ia ##t ##kowski)
    out = serving.word_level_logits(logits, enc["input_ids"], serving.continuation_table(tok), LABELS)
    for i, c in enumerate(cont):
        if c:
            assert LABELS[int(out[0, i].argmax())] == "I-LOC"
            p = out[0, i].softmax(-1)
            q = logits[0, 1].softmax(-1)
            assert float(p[L2I["I-LOC"]]) == pytest.approx(float(q[L2I["B-LOC"]] + q[L2I["I-LOC"]]), abs=1e-5)
        else:
            assert torch.equal(out[0, i], logits[0, i])


def test_the_shape_tokenizer_adds_shape_ids_for_every_call_form():
    tok = serving.with_word_shapes(minilm_tokenizer())
    one = tok("NATO met in Paris")
    assert len(one["shape_ids"]) == len(one["input_ids"]) and "offset_mapping" not in one
    assert [tc.SHAPES[s] for s in one["shape_ids"]] == ["none", "ALLCAPS", "lower", "lower", "Capitalised", "none"]
    many = tok(["NATO met", "in Paris today ok"], padding=True, return_tensors="pt")
    assert many["shape_ids"].shape == many["input_ids"].shape
    split = tok([["NATO", "met"]], is_split_into_words=True, return_offsets_mapping=True)
    assert split["shape_ids"][0][1] == tc.SHAPES.index("ALLCAPS") and "offset_mapping" in split
    assert serving.with_word_shapes(tok) is tok
    assert minilm_tokenizer()("NATO").keys() == {"input_ids", "token_type_ids", "attention_mask"}  # the base is untouched


@pytest.mark.parametrize("shape_dim", [0, 4])
def test_the_served_model_runs_in_the_pipelines_ner_path(shape_dim):
    from backend.pipelines import encoders

    tok = minilm_tokenizer()
    classifier = tc.new_model(tiny_bert(), len(LABELS), seed=1, shape_dim=shape_dim).eval()
    with torch.no_grad():  # a head that calls every token a B-LOC
        classifier.head.weight.zero_()
        classifier.head.bias.copy_(torch.tensor([0.0, 0, 0, 0, 0, 5.0, 0, 0, 0]))
    served_tok = serving.with_word_shapes(tok) if shape_dim else tok
    seen = {}
    forward = classifier.forward

    def spy(*args, **kwargs):
        seen["shape_ids"] = args[3] if len(args) > 3 else kwargs.get("shape_ids")
        return forward(*args, **kwargs)

    classifier.forward = spy
    served = serving.ForTokenClassification(classifier, served_tok, LABELS, "TestForTokenClassification").eval()
    assert served.config.id2label[5] == "B-LOC" and served.config.label2id["O"] == 0
    for aggregation in encoders.AGGREGATIONS:
        ents, _ = encoders.ner_with_pipeline(served, served_tok, ["Kwiatkowski"], aggregation)
        assert ents[0], aggregation
        if aggregation == "none":  # per token: B on the first piece, I on the pieces after it
            assert [e["entity_group"] for e in ents[0]][:2] == ["B-LOC", "I-LOC"]
        else:  # one word, one entity
            assert [(e["entity_group"], e["word"]) for e in ents[0]] == [("LOC", "Kwiatkowski")], aggregation
    assert (seen["shape_ids"] is not None) == bool(shape_dim)


# ----------------------------------------------------------------------------- data files
def test_the_shipped_splits_load_with_the_nine_conll_labels():
    data = ner_data.load_shipped()
    assert data.labels == LABELS
    assert min(len(data.train), len(data.validation), len(data.test)) >= 100
    assert ner_data.labels_of(data.train) == LABELS


def test_parse_conll_columns():
    text = "-DOCSTART- -X- O O\n\nEU NNP B-ORG\nrejects VBZ O\nGerman JJ B-MISC\n\nPeter B-PER\nBlackburn I-PER\n"
    out = ner_data.parse_conll(text)
    assert [(s.tokens, s.tags) for s in out] == [(["EU", "rejects", "German"], ["B-ORG", "O", "B-MISC"]),
                                                 (["Peter", "Blackburn"], ["B-PER", "I-PER"])]
    with pytest.raises(InputError, match="line 1"):
        ner_data.parse_conll("lonely\n")
    with pytest.raises(InputError, match="BIO tag"):
        ner_data.parse_conll("Paris LOCATION\n")
    with pytest.raises(InputError, match="no tagged"):
        ner_data.parse_conll("\n\n")


def test_parse_span_jsonl():
    line = '{"text": "Angela Merkel met Macron in Berlin.", "entities": [{"start": 0, "end": 13, "label": "per"}, ' \
           '{"start": 28, "end": 34, "label": "LOC"}]}'
    (s,) = ner_data.parse_span_jsonl(line)
    assert s.tokens == ["Angela", "Merkel", "met", "Macron", "in", "Berlin", "."]
    assert s.tags == ["B-PER", "I-PER", "O", "O", "O", "B-LOC", "O"]
    with pytest.raises(InputError, match="word boundaries"):
        ner_data.parse_span_jsonl('{"text": "Angela Merkel", "entities": [{"start": 0, "end": 3, "label": "PER"}]}')
    with pytest.raises(InputError, match="overlap"):
        ner_data.parse_span_jsonl('{"text": "New York", "entities": [{"start": 0, "end": 8, "label": "LOC"}, '
                                  '{"start": 4, "end": 8, "label": "LOC"}]}')
    with pytest.raises(InputError, match="not valid JSON"):
        ner_data.parse_span_jsonl("{nope")
