"""What is explained: one scalar a model computes from a token sequence, and how to remove tokens.

A `Target` wraps a loaded model and one input: the token ids, the positions whose share is
asked for (special tokens are kept out), and `score(ids, mask, focus)`, the number explained
(a class probability, a label's similarity score, a next-token probability or a logit
difference). Every method in `methods` and every check in `checks` reads the same `Target`,
so the scores and the tests of the scores are about the same quantity.

Removing a token means what it says: the token leaves the sequence and the rest closes up
(`scores_without`), as if it had never been typed; it is not replaced by [MASK].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import nn

ScoreFn = Callable[..., torch.Tensor]  # (ids, mask, focus, *extras in name order) -> (B,)
REMOVAL_BATCH = 16
# A decoder's removals (`suffix_groups`): a forward costs its rows x its widest suffix in tokens, plus about
# FORWARD_TOKENS more (reading the weights, the Python around 30 layers); at most GROUP_ROWS rows and
# GROUP_TOKENS padded tokens a forward (each row also copies the prompt's cached keys and values).
FORWARD_TOKENS = 24
GROUP_ROWS = 32
GROUP_TOKENS = 2048


def suffix_groups(lengths: list[int], overhead: int = FORWARD_TOKENS, max_rows: int = GROUP_ROWS,
                  max_tokens: int = GROUP_TOKENS) -> list[list[int]]:
    """Row indices in batches (longest suffix first) that put the fewest tokens through the model: a batch
    pads its rows to its longest, so rows of like length go together, and each forward costs `overhead`.
    Exact over the longest-first order (dynamic programming; contiguous runs of that order are optimal)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    size = [lengths[i] for i in order]
    best, cut = [0.0] + [float("inf")] * len(order), [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        for start in range(end - 1, max(-1, end - 1 - max_rows), -1):
            width = size[start]  # the longest of order[start:end]
            if (end - start) * width > max_tokens and end - start > 1:
                break
            cost = best[start] + (end - start) * width + overhead
            if cost < best[end]:
                best[end], cut[end] = cost, start
    groups, end = [], len(order)
    while end:
        groups.append(order[cut[end]:end])
        end = cut[end]
    return groups[::-1]


@dataclass
class Target:
    """One explained quantity on one input (model-level: handed a model, never asks the hub)."""

    model: nn.Module
    ids: list[int]  # the whole sequence the model reads, special tokens included
    positions: list[int]  # indices into `ids` that get a score (not [CLS]/[SEP], not the NER token itself)
    score_fn: ScoreFn
    quantity: str  # what is explained, in words: "probability of POSITIVE"
    baseline_id: int  # the token the integrated-gradients baseline puts at `positions`
    rollout_rows: str = "mean"  # whose attention is rolled out: "mean" (mean pooling), "first", "focus"
    focus: int = -1  # the position the output is read at (decoder: last; NER: the tagged token)
    extras: dict[str, list[int]] = field(default_factory=dict)  # per-token inputs that move with ids (shape_ids)
    on_forward: Callable[[], None] | None = None  # called before every forward: the request's budget check
    # A causal model's shortcut (`scores_without`): (shared, suffixes) -> the quantity for rows that
    # begin with the first shared[r] tokens of `ids` and go on with suffixes[r] (only those are computed).
    prefix_score: Callable[[list[int], list[list[int]]], np.ndarray] | None = None
    empty_id: int | None = None  # what a row with every token removed reads (a decoder's start token)

    # --------------------------------------------------------------- forwards
    @property
    def device(self):
        return next(self.model.parameters()).device

    def batch(self, rows: list[list[int]], extras: list[dict[str, list[int]]] | None = None,
              focus: list[int] | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]:
        """Right-padded (ids, mask, focus, extras) tensors for several sequences."""
        width = max(len(r) for r in rows)
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        ext = {k: torch.zeros((len(rows), width), dtype=torch.long) for k in self.extras}
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r)
            mask[i, :len(r)] = 1
            for k in self.extras:
                ext[k][i, :len(r)] = torch.tensor((extras[i] if extras else self.extras)[k])
        foc = torch.tensor(focus if focus is not None else [self._focus_in(len(r)) for r in rows])
        dev = self.device
        return ids.to(dev), mask.to(dev), foc.to(dev), {k: v.to(dev) for k, v in ext.items()}

    def _focus_in(self, length: int) -> int:
        return length - 1 if self.focus == -1 else self.focus

    def full_inputs(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]:
        return self.batch([self.ids])

    def baseline_ids(self) -> torch.Tensor:
        """The input with every scored position replaced by `baseline_id` ([CLS]/[SEP] kept)."""
        base = list(self.ids)
        for p in self.positions:
            base[p] = self.baseline_id
        return torch.tensor([base], device=self.device)

    def score(self, ids, mask, focus, *extra) -> torch.Tensor:
        """The quantity for a batch; `extra`: the per-token inputs in `extras`' name order."""
        if self.on_forward is not None:
            self.on_forward()
        return self.score_fn(ids, mask, focus, *extra)

    def _call(self, ids, mask, foc, ext) -> torch.Tensor:
        return self.score(ids, mask, foc, *[ext[k] for k in sorted(ext)])

    def value(self) -> float:
        """The explained quantity on the whole input."""
        with torch.no_grad():
            ids, mask, foc, ext = self.full_inputs()
            return float(self._call(ids, mask, foc, ext)[0])

    def baseline_value(self) -> float:
        with torch.no_grad():
            _, mask, foc, ext = self.full_inputs()
            return float(self._call(self.baseline_ids(), mask, foc, ext)[0])

    def _kept(self, row) -> tuple[list[int], int]:
        """(the ids indices a keep-row leaves, how many of them are `ids`' own first tokens)."""
        drop = {p for p, k in zip(self.positions, row) if not k}
        kept = [i for i in range(len(self.ids)) if i not in drop]
        shared = next((j for j, i in enumerate(kept) if i != j), len(kept))
        return kept, shared

    def scores_without(self, keep: np.ndarray, check: Callable[[int], None] | None = None) -> np.ndarray:
        """The quantity with some tokens removed: `keep` is (B, len(positions)) booleans, a row per
        variant; a removed token leaves the sequence (the rest close up). -> (B,) floats."""
        keep = np.asarray(keep, dtype=bool).reshape(-1, len(self.positions))
        if self.prefix_score is not None:
            return self._scores_by_prefix([self._kept(row) for row in keep], check)
        out = np.empty(len(keep), dtype=np.float64)
        for start in range(0, len(keep), REMOVAL_BATCH):
            if check is not None:
                check(start)
            rows, extras, focus = [], [], []
            for row in keep[start:start + REMOVAL_BATCH]:
                kept, _ = self._kept(row)
                rows.append([self.ids[i] for i in kept] or ([self.empty_id] if self.empty_id is not None else []))
                extras.append({k: [v[i] for i in kept] for k, v in self.extras.items()})
                focus.append(kept.index(self.focus) if self.focus >= 0 else max(len(rows[-1]) - 1, 0))
            with torch.no_grad():
                ids, mask, foc, ext = self.batch(rows, extras, focus)
                out[start:start + len(rows)] = self._call(ids, mask, foc, ext).double().cpu().numpy()
        return out

    def _scores_by_prefix(self, rows: list[tuple[list[int], int]], check) -> np.ndarray:
        """A causal model's removals: the tokens before a row's first removed one are what the whole input
        began with, so their keys and values are reused (each row its own number of them) and only the
        rest, the row's suffix, is computed. Rows are grouped by suffix length (`suffix_groups`)."""
        seqs, shared = [], []
        for kept, n in rows:
            seqs.append([self.ids[i] for i in kept] if kept else [self.empty_id])
            shared.append(min(n, len(seqs[-1]) - 1) if kept else 0)  # at least the last token is computed
        out = np.empty(len(rows), dtype=np.float64)
        done = 0
        for chunk in suffix_groups([len(q) - s for q, s in zip(seqs, shared)]):
            if check is not None:
                check(done)
            if self.on_forward is not None:
                self.on_forward()
            with torch.no_grad():
                out[chunk] = self.prefix_score([shared[i] for i in chunk], [seqs[i][shared[i]:] for i in chunk])
            done += len(chunk)
        return out

    def keep_rows_forward(self) -> Callable[[torch.Tensor], torch.Tensor]:
        """A forward over 'is token i present' rows (1 = kept, 0 = removed), for Captum's
        FeatureAblation: ablating feature i to its baseline 0 removes token i."""

        def forward(keep: torch.Tensor) -> torch.Tensor:
            values = self.scores_without(keep.detach().cpu().numpy() > 0.5)
            return torch.tensor(values, dtype=torch.float64)

        return forward


# ------------------------------------------------------------------ finding the parts of a model

def embedding_layer(model: nn.Module) -> nn.Embedding:
    """The token-embedding table (what gradient x input and integrated gradients attribute to)."""
    get = getattr(model, "get_input_embeddings", None)
    if callable(get):
        try:
            emb = get()
            if isinstance(emb, nn.Embedding):
                return emb
        except (NotImplementedError, AttributeError):
            pass
    for name, module in model.named_modules():
        if isinstance(module, nn.Embedding) and name.split(".")[-1] in ("word_embeddings", "embed_tokens", "wte"):
            return module
    raise ValueError(f"no token-embedding table found in {type(model).__name__}")


def backbone(model: nn.Module) -> nn.Module:
    """The transformers model inside a wrapper (the fine-tuned classifier, the NER model): the
    module whose forward returns attentions."""
    from transformers import PreTrainedModel

    for module in model.modules():
        if isinstance(module, PreTrainedModel):
            return module
    raise ValueError(f"no transformers model inside {type(model).__name__}")


def special_positions(tokenizer, ids: list[int]) -> set[int]:
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    return {i for i, t in enumerate(ids) if t in special}


def baseline_token(tokenizer) -> int:
    """[PAD] where the tokenizer has one, else [MASK], [UNK], end-of-text: a token that says nothing."""
    for name in ("pad_token_id", "mask_token_id", "unk_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    return 0


def token_rows(tokenizer, text: str, max_tokens: int, **kwargs) -> dict:
    """Ids and character offsets of `text` (fast tokenizer), refused past `max_tokens`."""
    from backend.runtime.errors import InputError

    enc = tokenizer(text, return_offsets_mapping=True, truncation=False, **kwargs)
    ids = list(enc["input_ids"])
    if len(ids) > max_tokens:
        raise InputError(f"The text is {len(ids)} tokens long; attributions are computed for at most "
                         f"{max_tokens} tokens here (each method runs the model once per token or more"
                         + (", and the decoder's removals would not fit the request's time budget past that"
                            if max_tokens < 128 else "") + "). Shorten the text to the sentence you are asking about.")
    return {"ids": ids, "offsets": [tuple(o) for o in enc["offset_mapping"]],
            "extras": {k: list(enc[k]) for k in ("shape_ids",) if k in enc}}
