"""A tiny GPT trained from scratch (the book's chapter 10): a transformers GPT2Config with a few
layers, a small width and a short context, trained with AdamW on the learner's text.

Tokens are either **bytes** (every UTF-8 byte is one token: 256 of them, nothing to learn
first) or the **BPE** the tab trains, retrained here deterministically from the same corpus and
vocabulary size (same library, same settings as /train_tokenizer). Both are one
`tokenizers.Tokenizer`, so the download is a `save_pretrained` folder whose tokenizer loads
with `AutoTokenizer`. The text is split into train (the first 90 %) and validation (the last
10 %); a step samples `batch` random windows of `context` tokens from the train part.

`train_steps` is a generator: a "step" event every few steps (the new losses), an "eval" event
every `eval_every` steps (validation loss and a sample), then "done". Dropout is off and every
random draw comes from generators seeded by `seed`, so a seed gives the same run. Stopping
(the stop flag or the request's time budget) ends the loop after the current step and keeps
the model trained so far. The model work (`train_chunk`, `eval_chunk`, `sample_task`) is in
stateless GPU tasks whose state goes in and comes back (on ZeroGPU a worker keeps nothing); the
model stays on the CPU, on one thread: a model this small gains nothing from more.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from backend.runtime import budget
from backend.runtime import stops
from backend.runtime.device import gpu_task
from backend.scratch import train as tok_train

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
    model.eval()
    with torch.inference_mode():
        loss = float(_shifted_loss(model, *windows))
    model.train()
    return loss


@dataclass
class Settings:
    steps: int
    batch: int
    learning_rate: float
    eval_every: int
    temperature: float
    seed: int
    prompt: str = ""
    report_every: int = 5


@dataclass
class Outcome:
    losses: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    steps_run: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    model: Any = None  # the model as trained so far (a GPU task hands back a new object)


@gpu_task(duration=60)
def eval_chunk(model, windows, prompt_ids: list[int], n: int, temperature: float, seed: int) -> tuple[float, list[int]]:
    """The validation loss on fixed windows and a sample: a stateless GPU task (plain values in and out)."""
    with one_thread():
        return val_loss(model, windows), sample(model, prompt_ids, n, temperature, seed)


@gpu_task(duration=60)
def sample_task(model, prompt_ids: list[int], n: int, temperature: float, seed: int) -> list[int]:
    with one_thread():
        return sample(model, prompt_ids, n, temperature, seed)


@gpu_task(duration=120)
def train_chunk(bundle: tuple, batches: list[tuple], lrs: list[float],
                stop_key: str | None = None) -> tuple[tuple, list[float]]:
    """A few AdamW steps on (model, optimizer), given the batches and learning rates: a GPU task
    whose state travels in and out (on ZeroGPU a worker keeps nothing, so the caller keeps the
    bundle it gets back)."""
    model, opt = bundle
    losses = []
    model.train()
    with one_thread():
        for (x, y), lr in zip(batches, lrs):
            if losses and stops.asked(stop_key):  # Stop, checked per step (backend/runtime/stops.py)
                break
            for group in opt.param_groups:
                group["lr"] = lr
            loss = _shifted_loss(model, x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(float(loss.detach()))
            if not math.isfinite(losses[-1]):
                break
    return (model, opt), losses


def _eval(model, tok, data, val_windows, prompt_ids, s: Settings, step: int) -> dict:
    t0 = time.perf_counter()
    loss, new = eval_chunk(model, val_windows, prompt_ids, SAMPLE_TOKENS, s.temperature, s.seed + step)
    return {"step": step, "val_loss": round(loss, 4), "sample": tok.decode(prompt_ids + new),
            "seconds": round(time.perf_counter() - t0, 3)}


@contextlib.contextmanager
def one_thread():
    """Run a block on one torch thread, then give the thread back its count. A model this small
    gains nothing from more: on this 2-core box, busy with other work, a step took 0.06 s on one
    thread and 1.2 s on two (the threads wait for each other)."""
    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before != 1:
            torch.set_num_threads(before)


def _stopped(stop) -> str | None:
    if stop is not None and stop.is_set():
        return "stopped"
    b = budget.current()
    if b is not None and b.expired():
        return "stopped" if b.cancelled else "time budget"
    return None


def schedule(steps: int) -> Callable[[int], float]:
    """The learning rate's factor per step: a linear warm-up over the first 10 % (at most 100 steps;
    without it Adam's first big steps can throw the model off), then a cosine down to 10 %."""
    warm = max(1, min(100, steps // 10))

    def factor(i: int) -> float:
        if i < warm:
            return (i + 1) / warm
        done = (i - warm) / max(1, steps - warm)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))

    return factor


def train_steps(model, tok: Tokenizer, data: Data, s: Settings, stop=None,
                outcome: Outcome | None = None) -> Iterator[dict]:
    """Train, yielding events; `outcome` (filled as it goes) holds the losses and the current
    model (`outcome.model`) even if the caller stops iterating early."""
    out = outcome if outcome is not None else Outcome()
    out.model = model
    gen = torch.Generator().manual_seed(s.seed)
    val_windows = data.windows(data.val, EVAL_BATCHES * s.batch, torch.Generator().manual_seed(s.seed + 1))
    prompt_ids = tok.encode(s.prompt).ids if s.prompt else data.val[:1].tolist()
    bundle = (model, torch.optim.AdamW(model.parameters(), lr=s.learning_rate, weight_decay=0.01))
    factor = schedule(s.steps)
    start = time.perf_counter()
    out.evals.append(_eval(model, tok, data, val_windows, prompt_ids, s, 0))
    yield {"event": "eval", **out.evals[-1]}
    step = 0
    while step < s.steps:
        out.stopped = _stopped(stop)
        if out.stopped:
            break
        n = min(s.report_every, s.steps - step, s.eval_every - step % s.eval_every)
        batches = [data.windows(data.train, s.batch, gen) for _ in range(n)]
        with stops.named(stop) as key:
            bundle, losses = train_chunk(bundle, batches, [s.learning_rate * factor(step + i) for i in range(n)], key)
        out.model = bundle[0]
        if not all(math.isfinite(v) for v in losses):
            out.stopped = "diverged (loss is not finite: use a smaller learning rate)"
            break
        step += len(losses)  # fewer than n after a Stop
        out.losses += [round(v, 4) for v in losses]
        out.steps_run = step
        yield {"event": "step", "step": step, "losses": out.losses[-len(losses):]}
        if (step % s.eval_every == 0 or step == s.steps) and _stopped(stop) != "stopped":  # none after Stop
            out.evals.append(_eval(out.model, tok, data, val_windows, prompt_ids, s, step))
            yield {"event": "eval", **out.evals[-1]}
    if not out.stopped and _stopped(stop) == "stopped":  # Stop (or a cancel) during the last chunk
        out.stopped = "stopped"
    if out.steps_run and out.evals[-1]["step"] != out.steps_run and out.stopped != "stopped":  # Stop: no final pass
        out.evals.append(_eval(out.model, tok, data, val_windows, prompt_ids, s, out.steps_run))  # the final numbers
        yield {"event": "eval", **out.evals[-1]}
    out.seconds = time.perf_counter() - start
    out.model.eval()
