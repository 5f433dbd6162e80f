"""The /ner snippet restates the NER serving algorithm for a learner to read (backend/snippets/local_heads.py's
TAGGER and piece_shapes, written as text): here the written-out code runs beside the serving code
(backend/engines/ner/serving.py) on one tiny random model with word shapes at its input and its head, and both
must give the same logits and the same per-piece word shapes. (tests/integration/test_snippets_local_heads.py runs
the whole snippet against the real model and pipeline.)"""

from __future__ import annotations

import torch
from transformers import AutoConfig, TokenClassificationPipeline

from backend.engines.ner import serving, token_classification as tc
from backend.snippets import local_heads
from backend.snippets.word_shapes import WORD_SHAPE
from tests.tiny_models import minilm_tokenizer, tiny_bert

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
TEXTS = ["Schwarzenegger met Dzhokhar in WOLFSBURG on 12 May.", "the UNESCO-listed Zürich, mr. O'Neil!"]


def _written(folder) -> dict:
    """The snippet's own definitions (word_shape, PIECE, B_TO_I, Tagger, piece_shapes), run as the snippet runs."""
    lines = local_heads.ner(TEXTS, "simple", folder).splitlines()
    tables = [l for l in lines if l.startswith(("PIECE = ", "B_TO_I = "))]
    assert len(tables) == 2
    return tables


def test_the_written_tagger_gives_the_serving_models_logits_and_shapes(tmp_path):
    tokenizer = minilm_tokenizer()
    model = tc.new_model(tiny_bert(), len(LABELS), seed=0, shape_dim=4, shape_input=True)
    torch.manual_seed(1)
    torch.nn.init.normal_(model.shape_in.weight, std=0.5)  # starts at zero: give the shapes something to do
    model.eval()
    ns = {"torch": torch, "AutoConfig": AutoConfig, "TokenClassificationPipeline": TokenClassificationPipeline,
          "tokenizer": tokenizer, "encoder": model.encoder, "labels": LABELS,
          "head": {k: v for k, v in model.state_dict().items() if not k.startswith("encoder.")}}
    exec("\n".join([*_written(tmp_path), *WORD_SHAPE, *local_heads.TAGGER]), ns)
    served = serving.ForTokenClassification(model, tokenizer, LABELS, "BertForTokenClassification").eval()
    enc = tokenizer(TEXTS, padding=True, return_offsets_mapping=True, return_special_tokens_mask=True,
                    return_tensors="pt")
    shapes = torch.tensor(serving._shape_rows(enc, TEXTS, False))
    for row, text in enumerate(TEXTS):  # the snippet's shapes, piece by piece, from the text as typed
        ids, spans = enc.input_ids[row].tolist(), enc.offset_mapping[row].tolist()
        special = enc.special_tokens_mask[row].tolist()
        assert ns["piece_shapes"](text, ids, spans, special) == shapes[row].tolist()
    assert bool(ns["PIECE"][enc.input_ids].any())  # the texts have words of several pieces
    with torch.inference_mode():
        want = served(enc.input_ids, enc.attention_mask, enc.token_type_ids, shapes).logits
        got = ns["Tagger"].forward(None, enc.input_ids, enc.attention_mask, enc.token_type_ids, shapes)["logits"]
    assert got.shape == want.shape
    torch.testing.assert_close(got, want.float(), atol=1e-5, rtol=1e-5)
