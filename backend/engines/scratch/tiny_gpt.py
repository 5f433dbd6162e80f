"""A tiny GPT trained from scratch (the book's chapter 10): a transformers GPT2Config with a few
layers, a small width and a short context, trained with AdamW on the learner's text.

Tokens are either **bytes** (every UTF-8 byte is one token: 256 of them, nothing to learn
first) or the **BPE** the tab trains, retrained here deterministically from the same corpus and
vocabulary size (same library, same settings as /train_tokenizer). Both are one
`tokenizers.Tokenizer`, so the download is a `save_pretrained` folder whose tokenizer loads
with `AutoTokenizer`. The text is split into train (the first 90 %) and validation (the last
10 %); a step samples `batch` random windows of `context` tokens from the train part.

`train_steps` is a generator (the one from-scratch loop, loop.py): a "step" event every few
steps (the new losses), an "eval" event every `eval_every` steps (validation loss and a sample).
Dropout is off and every random draw comes from generators seeded by `seed`, so a seed gives
the same run. Stopping
(the stop flag or the request's time budget) ends the loop after the current step and keeps
the model trained so far. The model work (`train_chunk`, `eval_chunk`, `sample_task`) is in
stateless GPU tasks whose state goes in and comes back (on ZeroGPU a worker keeps nothing); the
model stays on the CPU, on one thread: a model this small gains nothing from more.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Iterator

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from backend.runtime.device import gpu_task
from backend.engines.scratch import loop, train as tok_train
from backend.engines.scratch.loop import Outcome, one_thread, schedule, stopped as _stopped  # noqa: F401  (re-exported for the tiny GPT's callers)

SCHEMES = ("bytes", "bpe")
VAL_FRACTION = 0.1
EVAL_BATCHES = 4  # fixed validation windows per evaluation (the same ones every time)
SAMPLE_TOKENS = 80
DEVICE = "cpu"  # where the From scratch models train, on purpose (also where a GPU is present)
DEVICE_NOTE = ("It trains on the CPU, on one thread, also on a machine with a GPU: the time plan comes from rates "
               "measured on the CPU, and a model this small trains in a minute or two there.")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable stand-in character for each byte (so a byte-level vocabulary is text)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, n = keep[:], 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(keep, chars)}


def byte_tokenizer() -> Tokenizer:
    """One token per UTF-8 byte, id = the byte's value (a BPE with no merges over GPT-2's byte alphabet)."""
    table = _bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def make_tokenizer(scheme: str, text: str, vocab_size: int) -> Tokenizer:
    if scheme == "bytes":
        return byte_tokenizer()
    return tok_train.train_library("BPE", text, vocab_size)  # the tab's BPE, same settings: deterministic


def encode(tok: Tokenizer, text: str) -> torch.Tensor:
    """The whole text as one id sequence (line by line, a newline token kept for bytes)."""
    ids = tok.encode(text).ids if tok.get_vocab_size() == 256 else \
        [i for line in text.splitlines() for i in tok.encode(line).ids]
    return torch.tensor(ids, dtype=torch.long)


def build_model(vocab_size: int, layers: int, heads: int, width: int, context: int, seed: int):
    """A GPT2LMHeadModel from a config, initialised from `seed` (the global RNG is left untouched)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=vocab_size, n_positions=context, n_embd=width, n_layer=layers, n_head=heads,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None,
                        pad_token_id=None, tie_word_embeddings=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(config)
    return model


def param_count(model) -> int:
    return sum(p.numel() for p in model.parameters())


def unigram_entropy(ids: torch.Tensor) -> float:
    """Entropy (nats/token) of a text's own token frequencies: the loss of the best model that
    ignores context entirely; a model below it has learned something from the context."""
    counts = torch.tensor(list(Counter(ids.tolist()).values()), dtype=torch.float64)
    p = counts / counts.sum()
    return float(-(p * p.log()).sum())


@dataclass
class Data:
    train: torch.Tensor
    val: torch.Tensor
    context: int

    @classmethod
    def split(cls, ids: torch.Tensor, context: int) -> "Data":
        cut = int(len(ids) * (1 - VAL_FRACTION))
        return cls(ids[:cut], ids[cut:], context)

    def windows(self, part: torch.Tensor, batch: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        starts = torch.randint(0, len(part) - self.context, (batch,), generator=gen)  # y needs one more token
        x = torch.stack([part[s: s + self.context] for s in starts.tolist()])
        y = torch.stack([part[s + 1: s + 1 + self.context] for s in starts.tolist()])
        return x, y


def device_of(model) -> torch.device:
    """Where the model's weights are: its inputs are made there (the CPU here; a GPU if a caller moved it)."""
    return next(model.parameters()).device


def _shifted_loss(model, x, y) -> torch.Tensor:
    """Mean cross-entropy of the next token (y is x moved one token on: already shifted)."""
    device = device_of(model)
    logits = model(input_ids=x.to(device)).logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.to(device).reshape(-1))


def sample(model, prompt_ids: list[int], n: int, temperature: float, seed: int) -> list[int]:
    """`n` new tokens after `prompt_ids`: greedy at temperature 0, else sampled with a seeded generator."""
    gen = torch.Generator().manual_seed(seed)
    ids = list(prompt_ids)
    context = model.config.n_positions
    with torch.inference_mode():
        for _ in range(n):
            logits = model(torch.tensor([ids[-context:]], device=device_of(model))).logits[0, -1].float().cpu()
            if temperature <= 0:
                nxt = int(torch.argmax(logits))
            else:  # the seeded generator is a CPU one: the same draw on any device
                nxt = int(torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=gen))
            ids.append(nxt)
    return ids[len(prompt_ids):]


def val_loss(model, windows: tuple[torch.Tensor, torch.Tensor]) -> float:
    return loop.eval_loss(model, batch_loss, windows)


@dataclass(kw_only=True)
class Settings(loop.Settings):
    temperature: float
    prompt: str = ""


@gpu_task(duration=60)
def eval_chunk(model, windows, prompt_ids: list[int], n: int, temperature: float, seed: int) -> tuple[float, list[int]]:
    """The validation loss on fixed windows and a sample: a stateless GPU task (plain values in and out)."""
    with one_thread():
        return val_loss(model, windows), sample(model, prompt_ids, n, temperature, seed)


@gpu_task(duration=60)
def sample_task(model, prompt_ids: list[int], n: int, temperature: float, seed: int) -> list[int]:
    with one_thread():
        return sample(model, prompt_ids, n, temperature, seed)


def batch_loss(model, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return _shifted_loss(model, *batch)


def train_chunk(bundle: tuple, batches: list[tuple], lrs: list[float],
                stop_key: str | None = None) -> tuple[tuple, list[float]]:
    """A few AdamW steps on (model, optimizer) over (x, y) windows (loop.train_chunk, a GPU task)."""
    return loop.train_chunk(bundle, batches, lrs, batch_loss, stop_key)


def _eval(model, tok, data, val_windows, prompt_ids, s: Settings, step: int) -> dict:
    t0 = time.perf_counter()
    loss, new = eval_chunk(model, val_windows, prompt_ids, SAMPLE_TOKENS, s.temperature, s.seed + step)
    return {"step": step, "val_loss": round(loss, 4), "sample": tok.decode(prompt_ids + new),
            "seconds": round(time.perf_counter() - t0, 3)}


def train_steps(model, tok: Tokenizer, data: Data, s: Settings, stop=None,
                outcome: Outcome | None = None) -> Iterator[dict]:
    """Train (loop.run), yielding events; `outcome` (filled as it goes) holds the losses and the
    current model (`outcome.model`) even if the caller stops iterating early."""
    gen = torch.Generator().manual_seed(s.seed)
    val_windows = data.windows(data.val, EVAL_BATCHES * s.batch, torch.Generator().manual_seed(s.seed + 1))
    prompt_ids = tok.encode(s.prompt).ids if s.prompt else data.val[:1].tolist()
    yield from loop.run(model, s, batch_loss,
                        lambda n: [data.windows(data.train, s.batch, gen) for _ in range(n)],
                        lambda m, step: _eval(m, tok, data, val_windows, prompt_ids, s, step), stop, outcome)
