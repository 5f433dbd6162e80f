"""A tiny encoder-decoder trained from scratch on the toy date translation (the book's chapter 3
draws this architecture: an encoder reads the input, a decoder writes the output one token at a
time and looks back at the encoder's states through **cross-attention**).

The model is a transformers `BartForConditionalGeneration` built from a `BartConfig` (a couple of
layers, a small width), loaded with eager attention so `output_attentions=True` gives all three
kinds: `encoder_attentions`, `decoder_attentions` and `cross_attentions`. The tokenizer is a
word-level `tokenizers.Tokenizer` built here from the training pairs: it lowercases, splits on
spaces and punctuation ("twenty-third" -> "twenty", "-", "third") and splits digits one by one
("2004" -> "2", "0", "0", "4"); its decoder fuses tokens, so "2 0 0 4 - 0 3 - 2 3" decodes to
"2004-03-23". Both sides end with "</s>"; the decoder starts from "<s>".

`train_steps` is the tiny GPT's generator (the one from-scratch loop, backend/engines/scratch/loop.py):
"step" events with the new losses, "eval" events with the validation loss, exact match and a
few greedy translations, stopping cooperatively. The model work is in stateless GPU tasks
(state in, state out).

`cross_attention_check` recomputes one layer/head's cross-attention from the weights: Q from the
decoder's hidden state entering that cross-attention block (captured with a hook), K from the
encoder's output, softmax(QK^T / sqrt(d)) (the book's function, engines/attention/math.py), and
returns its max abs difference from what the model returned.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Iterator

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from backend.engines.attention.math import scaled_dot_product_attention
from backend.engines.scratch import loop
from backend.engines.scratch.loop import Outcome, one_thread
from backend.engines.scratch.tiny_gpt import device_of
from backend.runtime.device import gpu_task

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
MAX_SOURCE, MAX_TARGET = 32, 16  # tokens: the longest toy input is 14, the longest target 11


def _pre_tokenizer():
    return pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True)])


def build_tokenizer(pairs) -> Tokenizer:
    """A word-level tokenizer whose vocabulary is every token of the training pairs (sorted, so a
    given training set gives the same ids), after the four special tokens."""
    pre = _pre_tokenizer()
    norm = normalizers.Lowercase()
    seen = set()
    for source, target in pairs:
        for text in (source, target):
            seen.update(t for t, _ in pre.pre_tokenize_str(norm.normalize_str(text)))
    vocab = {t: i for i, t in enumerate(list(SPECIALS) + sorted(seen - set(SPECIALS)))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.normalizer = norm
    tok.pre_tokenizer = pre
    tok.post_processor = processors.TemplateProcessing(single=f"$A {EOS}", special_tokens=[(EOS, vocab[EOS])])
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens(list(SPECIALS))
    return tok


def ids(tok: Tokenizer, name: str) -> int:
    return tok.token_to_id(name)


def build_model(vocab_size: int, layers: int, heads: int, width: int, ffn: int, seed: int, tok: Tokenizer):
    """A BartForConditionalGeneration from a config, initialised from `seed` (global RNG untouched)."""
    from transformers import BartConfig, BartForConditionalGeneration

    config = BartConfig(
        vocab_size=vocab_size, d_model=width, encoder_layers=layers, decoder_layers=layers,
        encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=ffn, decoder_ffn_dim=ffn,
        max_position_embeddings=max(MAX_SOURCE, MAX_TARGET) + 2, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0, scale_embedding=False,
        pad_token_id=ids(tok, PAD), bos_token_id=ids(tok, BOS), eos_token_id=ids(tok, EOS),
        decoder_start_token_id=ids(tok, BOS), forced_bos_token_id=None, forced_eos_token_id=None,
        tie_word_embeddings=True, attn_implementation="eager")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BartForConditionalGeneration(config)
    model.config._attn_implementation = "eager"
    return model


def param_count(model) -> int:
    return sum(p.numel() for p in model.parameters())


def encode_batch(tok: Tokenizer, texts, limit: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids (padded on the right) and the attention mask (1 = a real token)."""
    rows = [e.ids[:limit - 1] + ([e.ids[-1]] if len(e.ids) >= limit else []) for e in tok.encode_batch(list(texts))]
    pad, width = ids(tok, PAD), max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        input_ids[i, :len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, :len(r)] = 1
    return input_ids, mask


@dataclass
class Batch:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor  # target ids + </s>, -100 where padded (ignored by the loss)


def make_batch(tok: Tokenizer, pairs) -> Batch:
    x, m = encode_batch(tok, [p[0] for p in pairs], MAX_SOURCE)
    y, ym = encode_batch(tok, [p[1] for p in pairs], MAX_TARGET)
    return Batch(x, m, y.masked_fill(ym == 0, -100))


def _loss(model, b: Batch) -> torch.Tensor:
    """Mean cross-entropy of each target token (Bart shifts the labels right behind <s> itself)."""
    device = device_of(model)
    return model(input_ids=b.input_ids.to(device), attention_mask=b.attention_mask.to(device),
                 labels=b.labels.to(device)).loss


def greedy(model, tok: Tokenizer, input_ids: torch.Tensor, mask: torch.Tensor, max_new: int = MAX_TARGET) -> list[list[int]]:
    """Greedy decoding by hand (batched): the encoder runs once, the decoder re-reads its prefix each
    step (12 steps of a tiny model need no cache). Each row stops at </s> (kept out of the result)."""
    eos, bos = ids(tok, EOS), ids(tok, BOS)
    device = device_of(model)
    input_ids, mask = input_ids.to(device), mask.to(device)
    with torch.inference_mode():
        enc = model.get_encoder()(input_ids=input_ids, attention_mask=mask)
        dec = torch.full((input_ids.size(0), 1), bos, dtype=torch.long, device=device)
        done = torch.zeros(input_ids.size(0), dtype=torch.bool, device=device)
        for _ in range(max_new):
            logits = model(encoder_outputs=enc, attention_mask=mask, decoder_input_ids=dec).logits[:, -1]
            nxt = logits.argmax(-1).masked_fill(done, eos)
            dec = torch.cat([dec, nxt[:, None]], dim=1)
            done |= nxt == eos
            if bool(done.all()):
                break
    out = []
    for row in dec[:, 1:].tolist():
        out.append(row[:row.index(eos)] if eos in row else row)
    return out


def decode(tok: Tokenizer, token_ids: list[int]) -> str:
    return tok.decode(token_ids, skip_special_tokens=True)


def evaluate(model, tok: Tokenizer, pairs, batch: int = 256) -> dict:
    """Exact match of greedy translations over `pairs`, and every (source, reference, output, right)."""
    model.eval()
    rows = []
    for i in range(0, len(pairs), batch):
        chunk = pairs[i: i + batch]
        x, m = encode_batch(tok, [p[0] for p in chunk], MAX_SOURCE)
        for (source, target), out in zip(chunk, greedy(model, tok, x, m)):
            text = decode(tok, out)
            rows.append({"source": source, "reference": target, "output": text, "right": text == target})
    right = sum(r["right"] for r in rows)
    return {"exact_match": round(right / max(1, len(rows)), 4), "right": right, "items": len(rows), "rows": rows}


def val_loss(model, b: Batch) -> float:
    return loop.eval_loss(model, _loss, b)


@gpu_task(duration=60)
def eval_chunk(model, tok, val_batch: Batch, val_pairs, shown: int) -> tuple[float, dict]:
    """Validation loss and greedy exact match on the validation split (a stateless GPU task)."""
    with one_thread():
        loss = val_loss(model, val_batch)
        ev = evaluate(model, tok, val_pairs)
        model.train()
    return loss, ev


def train_chunk(bundle: tuple, batches: list[Batch], lrs: list[float],
                stop_key: str | None = None) -> tuple[tuple, list[float]]:
    """A few AdamW steps on (model, optimizer) (loop.train_chunk, a GPU task: state in, state out)."""
    return loop.train_chunk(bundle, batches, lrs, _loss, stop_key)


@dataclass(kw_only=True)
class Settings(loop.Settings):
    report_every: int = 10
    shown: int = 4  # validation translations printed at each evaluation


def _eval(model, tok, val_batch, val_pairs, s: Settings, step: int) -> dict:
    t0 = time.perf_counter()
    loss, ev = eval_chunk(model, tok, val_batch, val_pairs, s.shown)
    return {"step": step, "val_loss": round(loss, 4), "val_exact_match": ev["exact_match"],
            "samples": [{k: r[k] for k in ("source", "reference", "output", "right")} for r in ev["rows"][:s.shown]],
            "seconds": round(time.perf_counter() - t0, 3)}


def train_steps(model, tok: Tokenizer, train_pairs, val_pairs, s: Settings, stop=None,
                outcome: Outcome | None = None) -> Iterator[dict]:
    """Train (loop.run) on random batches of `train_pairs` (drawn from a generator seeded by `s.seed`),
    yielding events; `outcome` holds the losses and the current model even if the caller stops early."""
    rng = random.Random(s.seed)
    val_pairs = list(val_pairs)
    val_batch = make_batch(tok, val_pairs)
    yield from loop.run(model, s, _loss,
                        lambda n: [make_batch(tok, rng.sample(train_pairs, min(s.batch, len(train_pairs))))
                                   for _ in range(n)],
                        lambda m, step: _eval(m, tok, val_batch, val_pairs, s, step), stop, outcome)


# ---- one input, looked at closely ---------------------------------------------------------------

def tokens_of(tok: Tokenizer, token_ids: list[int]) -> list[str]:
    return [tok.id_to_token(i) for i in token_ids]


def _capture_cross_inputs(model, layer: int) -> tuple[list, Any]:
    """A hook that keeps the hidden state entering layer `layer`'s cross-attention block (its query side)."""
    seen: list = []

    def hook(module, args, kwargs):
        seen.append(args[0] if args else kwargs["hidden_states"])

    handle = model.get_decoder().layers[layer].encoder_attn.register_forward_pre_hook(hook, with_kwargs=True)
    return seen, handle


def recompute_cross_attention(model, query_in: torch.Tensor, encoder_out: torch.Tensor, layer: int,
                              head: int) -> torch.Tensor:
    """softmax(Q K^T / sqrt(d)) for one head, from the layer's own projection weights:
    Q = decoder state x W_q + b_q, K = encoder output x W_k + b_k, sliced to the head's d dims."""
    attn = model.get_decoder().layers[layer].encoder_attn
    d = attn.head_dim
    cols = slice(head * d, (head + 1) * d)
    q = query_in[0].float() @ attn.q_proj.weight[cols].float().T + attn.q_proj.bias[cols].float()
    k = encoder_out[0].float() @ attn.k_proj.weight[cols].float().T + attn.k_proj.bias[cols].float()
    _, weights, _, _ = scaled_dot_product_attention(q, k, k)  # value unused: only the weights are compared
    return weights


@gpu_task(duration=60)
def inspect(model, tok: Tokenizer, text: str, layer: int, head: int) -> dict:
    """Greedy translation of `text`, then one forward of the decoder on its own output with every
    attention returned, and the recomputed cross-attention for (layer, head)."""
    with one_thread():
        x, m = encode_batch(tok, [text], MAX_SOURCE)
        x, m = x.to(device_of(model)), m.to(device_of(model))
        out = greedy(model, tok, x, m)[0]
        eos, bos = ids(tok, EOS), ids(tok, BOS)
        # Row i of the attention is the step that wrote written[i]: the output, then </s> if it was written
        # (a model that never stopped wrote MAX_TARGET tokens and no </s>).
        written = out + [eos] if len(out) < MAX_TARGET else out
        dec_in = torch.tensor([[bos] + written[:-1]], device=x.device)
        seen, handle = _capture_cross_inputs(model, layer)
        try:
            with torch.inference_mode():
                r = model(input_ids=x, attention_mask=m, decoder_input_ids=dec_in, output_attentions=True,
                          return_dict=True)
        finally:
            handle.remove()
        with torch.inference_mode():
            mine = recompute_cross_attention(model, seen[0], r.encoder_last_hidden_state, layer, head)
        theirs = r.cross_attentions[layer][0, head].float()
        diff = float((mine - theirs).abs().max())
        logits = r.logits[0].float()
        probs = torch.softmax(logits, -1)
        conf = [round(float(probs[i, t]), 4) for i, t in enumerate(written)]
    stack = lambda atts: torch.stack([a[0] for a in atts]).float().cpu().numpy()  # noqa: E731  (L, H, Tq, Tk)
    return {"source_ids": x[0].tolist(), "source_tokens": tokens_of(tok, x[0].tolist()),
            "decoder_input_tokens": tokens_of(tok, dec_in[0].tolist()), "output_ids": out,
            "output_tokens": tokens_of(tok, written), "output": decode(tok, out), "confidence": conf,
            "encoder_attentions": stack(r.encoder_attentions), "decoder_attentions": stack(r.decoder_attentions),
            "cross_attentions": stack(r.cross_attentions), "recomputed": mine.cpu().numpy(), "max_abs_diff": diff}
