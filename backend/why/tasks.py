"""One `Target` per prediction the lab makes on a text (model-level: handed a model and a tokenizer).

- `classifier`: a sequence classifier's probability of a label (the sentiment role, a checkpoint
  or the one fine-tuned here);
- `similarity`: zero-shot by embedding similarity, softmax(cosine / T) of a label, with the
  label descriptions' vectors held fixed (they are not the input being explained);
- `token_label`: a token classifier's (NER) probability of one token's label;
- `next_token`: a decoder's probability of the next token, or with a contrast token the logit
  difference logit(target) - logit(contrast) ("why 'Paris' rather than 'London'").
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from backend.why.targets import Target, baseline_token, special_positions, token_rows
from backend.engines.embedding.vectors import embed_texts, mean_pool
from backend.runtime.errors import InputError

MAX_TOKENS = 128
# The decoder's prompt has its own limit because each removal runs the 135M-parameter decoder again from the
# removed token on. Recomputed whole, a 128-token prompt takes 91 s of CPU on one idle core at the defaults;
# with the LM head projecting only the position read and each removal reusing the prompt's cached keys and
# values up to its own removed token, 128 tokens fit the 120 s budget (bench/results/attribution.md).
DECODER_MAX_TOKENS = 128


def _labels(model) -> list[str]:
    id2label = getattr(model.config, "id2label", None) or {}
    n = int(getattr(model.config, "num_labels", len(id2label)) or len(id2label))
    return [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(n)]


def _pick_label(labels: list[str], wanted, probs: np.ndarray) -> int:
    """The label asked for (by name, any case), else the predicted one."""
    if wanted is None or str(wanted).strip() == "":
        return int(np.argmax(probs))
    low = [l.lower() for l in labels]
    name = str(wanted).strip().lower()
    if name not in low:
        raise InputError(f"'{str(wanted)[:40]}' is not one of this model's labels: {', '.join(labels)}.")
    return low.index(name)


def _scored(tokenizer, ids: list[int], also: set[int] = frozenset()) -> list[int]:
    special = special_positions(tokenizer, ids) | set(also)
    positions = [i for i in range(len(ids)) if i not in special]
    if not positions:
        raise InputError("The text has no tokens to explain: type a few words.")
    return positions


def classifier(model, tokenizer, text: str, label=None, max_tokens: int = MAX_TOKENS) -> tuple[Target, dict]:
    """The probability of `label` (default: the predicted label) under a sequence classifier."""
    rows = token_rows(tokenizer, text, max_tokens)
    labels = _labels(model)

    def score(ids, mask, focus, *extra):
        return model(input_ids=ids, attention_mask=mask).logits.float().softmax(-1)[:, chosen]

    chosen = 0
    t = Target(model, rows["ids"], _scored(tokenizer, rows["ids"]), score, "", baseline_token(tokenizer),
               rollout_rows="mean" if _mean_pooled(model) else "first")
    with torch.no_grad():
        ids, mask, foc, _ = t.full_inputs()
        probs = model(input_ids=ids, attention_mask=mask).logits.float().softmax(-1)[0].cpu().numpy()
    chosen = _pick_label(labels, label, probs)
    t.quantity = f"probability of {labels[chosen]}"
    return t, {"offsets": rows["offsets"], "label": labels[chosen], "labels": labels,
               "probabilities": {l: round(float(p), 6) for l, p in zip(labels, probs)}}


def _mean_pooled(model) -> bool:
    return any("MeanPool" in a for a in (getattr(model.config, "architectures", None) or []))


def similarity(model, tokenizer, text: str, descriptions: dict[str, str], label=None, temperature: float = 0.05,
               max_tokens: int = MAX_TOKENS) -> tuple[Target, dict]:
    """softmax(cosine(text, description) / T) of `label` (default: the top label); the text's
    vector is the embedder's mean-pooled, L2-normalised last hidden state, as `embed_texts`."""
    rows = token_rows(tokenizer, text, max_tokens)
    labels = list(descriptions)
    vecs = torch.from_numpy(embed_texts([descriptions[l] for l in labels], model, tokenizer))
    state = {"chosen": 0}

    def cosines(ids, mask):
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state.float()
        pooled = torch.nn.functional.normalize(mean_pool(hidden, mask), p=2, dim=1)
        return pooled @ vecs.to(pooled.device).T

    def score(ids, mask, focus, *extra):
        return (cosines(ids, mask) / temperature).softmax(-1)[:, state["chosen"]]

    t = Target(model, rows["ids"], _scored(tokenizer, rows["ids"]), score, "", baseline_token(tokenizer))
    with torch.no_grad():
        ids, mask, _, _ = t.full_inputs()
        cos = cosines(ids, mask)[0]
        probs = (cos / temperature).softmax(-1).cpu().numpy()
    state["chosen"] = _pick_label(labels, label, probs)
    t.quantity = f"score of '{labels[state['chosen']]}' (softmax of cosine / {temperature})"
    return t, {"offsets": rows["offsets"], "label": labels[state["chosen"]], "labels": labels,
               "probabilities": {l: round(float(p), 6) for l, p in zip(labels, probs)},
               "cosines": {l: round(float(c), 6) for l, c in zip(labels, cos.cpu().numpy())},
               "descriptions": dict(descriptions), "temperature": temperature}  # what the snippet embeds


def token_label(model, tokenizer, text: str, char: int | None = None, label=None,
                max_tokens: int = MAX_TOKENS) -> tuple[Target, dict]:
    """A token classifier's probability of one token's label; the token is the one covering
    character `char` (default: the first token tagged as part of an entity, else the first word)."""
    rows = token_rows(tokenizer, text, max_tokens)
    labels = _labels(model)
    ids, offsets = rows["ids"], rows["offsets"]
    specials = special_positions(tokenizer, ids)
    state = {"chosen": 0}
    names = sorted(rows["extras"])

    def score(ids_, mask, focus, *extra):
        kwargs = dict(zip(names, extra))
        logits = model(input_ids=ids_, attention_mask=mask, **kwargs).logits.float()
        picked = logits[torch.arange(len(focus), device=logits.device), focus]
        return picked.softmax(-1)[:, state["chosen"]]

    t = Target(model, ids, [], score, "", baseline_token(tokenizer), rollout_rows="focus", extras=rows["extras"])
    with torch.no_grad():
        b_ids, mask, _, ext = t.full_inputs()
        probs = model(input_ids=b_ids, attention_mask=mask, **ext).logits.float().softmax(-1)[0].cpu().numpy()
    focus = _focus_token(offsets, specials, probs, labels, char)
    t.focus = focus
    t.positions = _scored(tokenizer, ids, {focus})
    state["chosen"] = _pick_label(labels, label, probs[focus])
    word = text[offsets[focus][0]:offsets[focus][1]]
    t.quantity = f"probability that '{word}' is {labels[state['chosen']]}"
    return t, {"offsets": [offsets[p] for p in range(len(ids))], "label": labels[state["chosen"]], "labels": labels,
               "focus": {"index": focus, "token": word, "start": offsets[focus][0], "end": offsets[focus][1]},
               "probabilities": {l: round(float(p), 6) for l, p in zip(labels, probs[focus])}}


def _focus_token(offsets, specials, probs, labels, char) -> int:
    candidates = [i for i in range(len(offsets)) if i not in specials and offsets[i][1] > offsets[i][0]]
    if not candidates:
        raise InputError("The text has no tokens to tag: type a few words.")
    if char is not None:
        for i in candidates:
            if offsets[i][0] <= char < offsets[i][1]:
                return i
        raise InputError(f"No token covers character {char} of the text: point at a word.")
    tagged = [i for i in candidates if labels[int(np.argmax(probs[i]))] != "O"]
    return tagged[0] if tagged else candidates[0]


def next_token(model, tokenizer, prompt: str, target: str | None = None, contrast: str | None = None,
               max_tokens: int | None = None) -> tuple[Target, dict]:
    """p(next token = target | prompt) (default target: the most likely token), or with a
    contrast token, logit(target) - logit(contrast) at the last position."""
    rows = token_rows(tokenizer, prompt, max_tokens or DECODER_MAX_TOKENS)
    ids = rows["ids"]
    state = {"target": 0, "contrast": None}

    at_focus = _keeps_positions(model)

    def last_logits(ids_, mask, focus):
        if at_focus:  # the LM head projects only each row's focus position (a 49k-word vocabulary)
            return model(input_ids=ids_, attention_mask=mask, use_cache=False,
                         logits_to_keep=focus.unsqueeze(1)).logits[:, 0].float()
        logits = model(input_ids=ids_, attention_mask=mask, use_cache=False).logits
        return logits[torch.arange(len(focus), device=logits.device), focus].float()

    def read(logits):
        if state["contrast"] is None:
            return logits.softmax(-1)[:, state["target"]]
        return logits[:, state["target"]] - logits[:, state["contrast"]]

    def score(ids_, mask, focus, *extra):
        return read(last_logits(ids_, mask, focus))

    start = getattr(tokenizer, "bos_token_id", None)
    t = Target(model, ids, _scored(tokenizer, ids), score, "", baseline_token(tokenizer), rollout_rows="focus",
               empty_id=int(start if start is not None else baseline_token(tokenizer)))
    with torch.no_grad():
        b_ids, mask, foc, _ = t.full_inputs()
        out = model(input_ids=b_ids, attention_mask=mask, use_cache=True, **({"logits_to_keep": 1} if at_focus else {}))
        probs = out.logits[0, -1].float().softmax(-1)
    if _plain_cache(out.past_key_values):
        t.prefix_score = _prefix_scorer(model, [tuple(kv[:2]) for kv in out.past_key_values], read)
    state["target"] = _token_id(tokenizer, prompt, target) if target else int(probs.argmax())
    if contrast:
        state["contrast"] = _token_id(tokenizer, prompt, contrast)
        if state["contrast"] == state["target"]:
            raise InputError("The contrast token is the target token itself: choose another word to compare with.")
    name = tokenizer.decode([state["target"]])
    info = {"offsets": rows["offsets"], "target": {"id": state["target"], "token": name,
                                                    "probability": round(float(probs[state["target"]]), 6)},
            "predicted": {"id": int(probs.argmax()), "token": tokenizer.decode([int(probs.argmax())]),
                          "probability": round(float(probs.max()), 6)}}
    if state["contrast"] is None:
        t.quantity = f"probability of the next token '{name}'"
    else:
        other = tokenizer.decode([state["contrast"]])
        t.quantity = f"logit('{name}') - logit('{other}')"
        info["contrast"] = {"id": state["contrast"], "token": other,
                            "probability": round(float(probs[state["contrast"]]), 6)}
    return t, info


def _plain_cache(cache) -> bool:
    """Keys and values for every token (no recurrent state, no sliding window): a prefix of it is the
    cache of the prompt's prefix."""
    from transformers import DynamicCache

    return (isinstance(cache, DynamicCache) and bool(cache.is_croppable)
            and not any(getattr(layer, "is_sliding", False) for layer in cache.layers))


def _keeps_positions(model) -> bool:
    """Whether `model` slices its hidden states with transformers' `slice_logits_to_keep` before its LM head,
    so `logits_to_keep` (batch, 1) projects only each row's own last position: the head is a fifth of
    SmolLM2's compute per token, and the full (batch, length, 49,152) logits 400 MB for 16 rows of 128."""
    import inspect

    module = sys.modules.get(type(model).__module__)
    try:
        takes = "logits_to_keep" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False
    return takes and callable(getattr(module, "slice_logits_to_keep", None))


def _prefix_scorer(model, layers: list[tuple], read):
    """`Target.prefix_score` for a decoder: row r's first shared[r] tokens are the prompt's own, so the
    prompt's keys and values (`layers`, from one forward) stand in for them and only the row's suffix runs
    through the model, at the positions it has in the shortened row. The rows share the cache up to the
    largest shared[r]; the mask hides from each row the cached tokens past its own (its removed token on).
    Exact: a masked key gets no weight, and every row's own tokens sit at their own positions."""
    from transformers import DynamicCache

    at_focus = _keeps_positions(model)

    def prefix_score(shared: list[int], suffixes: list[list[int]]) -> np.ndarray:
        width, n, top = max(len(s) for s in suffixes), len(suffixes), max(shared)
        dev = next(model.parameters()).device
        ids = torch.zeros((n, width), dtype=torch.long, device=dev)
        mask = torch.zeros((n, top + width), dtype=torch.long, device=dev)
        for i, (s, k) in enumerate(zip(suffixes, shared)):
            ids[i, :len(s)] = torch.tensor(s)
            mask[i, :k] = 1
            mask[i, top:top + len(s)] = 1
        past = None
        if top:
            # the cache copies what it is given (torch.cat): an expanded view needs no copy of its own
            past = DynamicCache(ddp_cache_data=[(k[:, :, :top].expand(n, -1, -1, -1),
                                                 v[:, :, :top].expand(n, -1, -1, -1))
                                                for k, v in layers], config=model.config)
        positions = (torch.tensor(shared, device=dev).unsqueeze(1)
                     + torch.arange(width, device=dev).unsqueeze(0))
        last = torch.tensor([len(s) - 1 for s in suffixes], device=dev)
        keep = {"logits_to_keep": last.unsqueeze(1)} if at_focus else {}
        logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=past,
                       use_cache=past is not None, **keep).logits
        picked = logits[:, 0] if at_focus else logits[torch.arange(n, device=dev), last]
        return read(picked.float()).double().cpu().numpy()

    return prefix_score


def _token_id(tokenizer, prompt: str, word: str) -> int:
    """The first token of `word` as it would follow `prompt` (a space before it unless the
    prompt ends in one or the word starts with one)."""
    word = str(word)
    if word.strip() == "":
        raise InputError("The target or contrast token is empty: type a word, e.g. Paris.")
    if not word[0].isspace() and prompt and not prompt[-1].isspace():
        word = " " + word.strip()
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    if not ids:
        raise InputError(f"'{word.strip()[:40]}' gives no token under this tokenizer.")
    return int(ids[0])
