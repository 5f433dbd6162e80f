"""The offline NER model served like any token classifier: `ForTokenClassification` gives it the
`.logits` / `config.id2label` face transformers' pipeline expects, word pieces after the first
take their word's prediction, and `with_word_shapes` makes the tokenizer hand the model each
piece's word shape, read from the original text (the uncased tokenizer lowercases it)."""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from backend.engines.ner.token_classification import TokenClassifier, _device_of, shape_ids_for, word_shape


class _TokenOutput(dict):
    """What transformers' pipeline reads: `output["logits"]` (a dict) and `output.logits`."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


SENTENCEPIECE_START = "\u2581"  # "▁": SentencePiece's mark of a piece that starts a word


def continuation_table(tokenizer) -> torch.Tensor:
    """True for vocabulary ids that continue a word: WordPiece's `##` pieces, or, for a SentencePiece
    vocabulary (XLM-R's, which marks word starts with ▁ instead), every piece without the ▁ that is
    not a special token."""
    size = max(len(tokenizer), getattr(tokenizer, "vocab_size", 0) or 0)
    pieces = tokenizer.convert_ids_to_tokens(list(range(size)))
    if not any(isinstance(p, str) and p.startswith("##") for p in pieces[:5000]) and any(
            isinstance(p, str) and p.startswith(SENTENCEPIECE_START) for p in pieces[:5000]):
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        return torch.tensor([isinstance(p, str) and not p.startswith(SENTENCEPIECE_START) and i not in special
                             for i, p in enumerate(pieces)], dtype=torch.bool)
    return torch.tensor([isinstance(p, str) and p.startswith("##") for p in pieces], dtype=torch.bool)


def word_level_logits(logits: torch.Tensor, input_ids: torch.Tensor, continuation: torch.Tensor,
                      labels: list[str]) -> torch.Tensor:
    """Give every continuation piece its word's first-piece prediction, `B-X` moved onto `I-X`.

    The model is trained on first pieces only (the rest are -100), so the other pieces' own
    logits mean nothing. Copying the first piece's distribution, with p(I-X) := p(B-X) + p(I-X)
    and p(B-X) := 0, makes a token-level reader (the pipeline's "none" and "simple" grouping)
    see one entity per word instead of a word broken at its pieces."""
    cont = continuation.to(input_ids.device)[input_ids.clamp(0, len(continuation) - 1)]
    pos = torch.arange(input_ids.shape[1], device=input_ids.device).expand_as(input_ids)
    first = torch.where(cont, torch.zeros_like(pos), pos).cummax(dim=1).values
    copied = logits.gather(1, first.unsqueeze(-1).expand_as(logits))
    if not bool(cont.any()):
        return logits
    logp = copied.float().log_softmax(-1)
    moved = logp.clone()
    index = {l: i for i, l in enumerate(labels)}
    for l, b in index.items():
        if l.startswith("B-") and f"I-{l[2:]}" in index:
            i = index[f"I-{l[2:]}"]
            moved[..., i] = torch.logaddexp(logp[..., b], logp[..., i])
            moved[..., b] = -1e4
    return torch.where(cont.unsqueeze(-1), moved.to(logits.dtype), logits)


class ForTokenClassification(nn.Module):
    """A `TokenClassifier` shaped like an `AutoModelForTokenClassification` for transformers'
    token-classification pipeline: `model(input_ids=..., attention_mask=...).logits` of shape
    (batch, tokens, labels), `config.id2label` / `label2id` with the BIO tag names."""

    def __init__(self, classifier: TokenClassifier, tokenizer, labels: list[str], architecture: str):
        super().__init__()
        self.classifier = classifier
        self.labels = list(labels)
        cfg = copy.deepcopy(classifier.encoder.config)
        cfg.id2label = dict(enumerate(self.labels))
        cfg.label2id = {l: i for i, l in enumerate(self.labels)}
        cfg.architectures = [architecture]
        self.config = cfg
        self.register_buffer("continuation", continuation_table(tokenizer), persistent=False)

    @property
    def device(self):
        return _device_of(self.classifier)

    @property
    def dtype(self):
        return next(self.classifier.parameters()).dtype

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, shape_ids=None, **_):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        logits = self.classifier(input_ids, attention_mask, token_type_ids, shape_ids)
        return _TokenOutput(logits=word_level_logits(logits, input_ids, self.continuation, self.labels))


def _shape_rows(enc, texts, split_words: bool) -> list[list[int]]:
    """Each encoded row's word shapes, read from the original text (the tokenizer may lowercase)."""
    n_rows = len(enc["input_ids"])
    mapping = enc.get("overflow_to_sample_mapping")
    rows = []
    for i in range(n_rows):
        sample = int(mapping[i]) if mapping is not None else i
        word_ids = enc.word_ids(i)
        if split_words:
            words = texts[sample]
            rows.append(shape_ids_for(word_ids, list(words)))
            continue
        text, offsets = texts[sample], enc["offset_mapping"][i]
        spans: dict[int, list[int]] = {}
        for w, (s, e) in zip(word_ids, [tuple(int(x) for x in o) for o in offsets]):
            if w is not None:
                span = spans.setdefault(w, [s, e])
                span[0], span[1] = min(span[0], s), max(span[1], e)
        rows.append([0 if w is None else word_shape(text[spans[w][0]:spans[w][1]]) for w in word_ids])
    return rows


def with_word_shapes(tokenizer):
    """A copy of a fast tokenizer whose calls also return `shape_ids` (each token's word shape,
    from the text as written), so a model with a shape embedding gets them through any caller
    that passes the tokenizer's outputs to the model, transformers' pipeline included."""
    base = type(tokenizer)
    if getattr(base, "_tlab_word_shapes", False):
        return tokenizer

    class WordShapeTokenizer(base):
        _tlab_word_shapes = True

        def __call__(self, text=None, *args, **kwargs):
            if text is None or kwargs.get("text_pair") is not None or args:
                return super().__call__(text, *args, **kwargs)
            want_offsets = kwargs.get("return_offsets_mapping", False)
            kwargs["return_offsets_mapping"] = True
            split = bool(kwargs.get("is_split_into_words", False))
            single = isinstance(text, str) or (split and text and isinstance(text[0], str))
            texts = [text] if single else list(text)
            tensors = kwargs.get("return_tensors")
            enc = super().__call__(text, **kwargs)
            ids = enc["input_ids"]
            flat = ids.tolist() if hasattr(ids, "tolist") else ids
            batched = not (single and flat and isinstance(flat[0], int))
            rows = _shape_rows(enc if batched else _Rows(enc), texts, split)
            width = max((len(r) for r in rows), default=0)
            rows = [r + [0] * (width - len(r)) for r in rows]
            if tensors == "pt":
                enc["shape_ids"] = torch.tensor(rows, dtype=torch.long)
            elif tensors == "np":
                enc["shape_ids"] = np.array(rows, dtype=np.int64)
            else:
                enc["shape_ids"] = rows if batched else rows[0]
            if not want_offsets:
                del enc["offset_mapping"]
            return enc

    WordShapeTokenizer.__name__ = base.__name__  # save_pretrained records the base class
    shaped = copy.copy(tokenizer)
    shaped.__class__ = WordShapeTokenizer
    return shaped


class _Rows:
    """One unbatched encoding seen as a batch of one row."""

    def __init__(self, enc):
        self.enc = enc

    def __getitem__(self, key):
        return [self.enc[key]]

    def get(self, key):
        return None if key == "overflow_to_sample_mapping" else [self.enc.get(key)]

    def word_ids(self, i):
        return self.enc.word_ids(0)
