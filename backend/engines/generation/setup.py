"""How one generation run is set up: the prompt within the context window, the logits
processors in generate's order, the GenerationConfig, stopping on Stop or the time budget, and a
streamer. `generate` runs it; the Pipelines and Decoding tabs share it.
"""

from __future__ import annotations

import queue
import threading

import torch
from transformers import (
    GenerationConfig,
    MinNewTokensLengthLogitsProcessor,
    NoRepeatNGramLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
    StoppingCriteria,
    StoppingCriteriaList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.generation.streamers import BaseStreamer

from backend.runtime import budget as budgets
from backend.engines.generation.settings import (
    DecodeSettings,
)
from backend.runtime.errors import InputError
from backend.runtime.validation import check_text

MAX_CONTEXT_TOKENS = 2048  # prompt + new tokens; eager attention on CPU stays interactive


# ----------------------------------------------------------------------------- prompt


def build_prompt(tokenizer, prompt: str, settings: DecodeSettings, context_limit: int) -> tuple[str, list[int], list[str]]:
    """Prompt text -> (text the model sees, its token ids, warnings).

    With `chat_template` the prompt becomes one user turn of the model's chat template. A
    prompt that leaves no room for `max_new_tokens` inside `context_limit` is cut from the left
    (the end of a prompt matters most for what comes next), and a warning says so.
    """
    prompt = check_text(prompt, "prompt")
    warnings: list[str] = []
    text = prompt
    if settings.chat_template:
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            warnings.append("This model has no chat template, so the prompt was used as raw text to continue.")
            ids = tokenizer(text)["input_ids"]
    else:
        ids = tokenizer(text)["input_ids"]
    if not ids:
        raise InputError("The prompt produced no tokens; type some text for the model to continue.")
    room = context_limit - settings.max_new_tokens
    if room < 1:
        raise InputError(
            f"max_new_tokens ({settings.max_new_tokens}) leaves no room for the prompt in the {context_limit}-token "
            "context; lower max_new_tokens."
        )
    if len(ids) > room:
        dropped = len(ids) - room
        ids = ids[-room:]
        text = tokenizer.decode(ids)
        warnings.append(
            f"The prompt is {room + dropped} tokens, longer than the {context_limit}-token context leaves room for "
            f"with {settings.max_new_tokens} new tokens: the first {dropped} tokens were cut (truncated from the left)."
        )
    return text, list(ids), warnings


def context_limit(model) -> int:
    """Tokens the playground allows (prompt + new): the model's positions, at most MAX_CONTEXT_TOKENS."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    n = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or MAX_CONTEXT_TOKENS
    return int(min(n, MAX_CONTEXT_TOKENS))


# ----------------------------------------------------------------------------- generation


class StopCriterion(StoppingCriteria):
    """Stops generation at the next step once `event` is set (the UI's Stop button) or the
    request's budget (backend.runtime.budget: its deadline, or a cancel) has run out.

    Generate then returns the tokens so far, so the caller gets the text up to that point.
    """

    def __init__(self, event: threading.Event | None = None, budget: budgets.Budget | None = None):
        self.event = event
        self.budget = budget

    def stop_now(self) -> bool:
        if self.event is not None and self.event.is_set():
            return True
        if self.budget is not None:
            budgets.fair_threads()
            return self.budget.expired()
        return False

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), self.stop_now(), dtype=torch.bool, device=input_ids.device)


def stopping_criteria(event: threading.Event | None = None) -> StoppingCriteriaList | None:
    """The stop criterion for this request (its budget, plus `event`), or None when neither exists."""
    b = budgets.current()
    if event is None and b is None:
        return None
    return StoppingCriteriaList([StopCriterion(event, b)])


def early_finish(event: threading.Event | None = None) -> str | None:
    """Why generation stopped before EOS / its length: "stopped", "time budget", or None."""
    if event is not None and event.is_set():
        return "stopped"
    b = budgets.current()
    return b.finish_reason if b is not None else None


class _QueueStreamer(BaseStreamer):
    """Hands each new token id (first row) to a queue; generate's first put is the prompt."""

    def __init__(self, q: queue.Queue):
        self.q = q
        self.seen_prompt = False

    def put(self, value) -> None:
        if not self.seen_prompt:
            self.seen_prompt = True
            return
        self.q.put(("token", int(value.reshape(-1)[0])))

    def end(self) -> None:
        pass


def build_processors(settings: DecodeSettings, prompt_len: int = 0, eos: set[int] | None = None,
                     device: str | torch.device = "cpu") -> tuple[list, list]:
    """The logits processors generate would build for these settings, in generate's order.

    Returns (all processors in order, [penalties, temperature, cuts]). Generate itself gets a
    neutral config, so nothing is applied twice. `device` is where the scores will be (the
    model's device): a processor holding a tensor (the minimum length's EOS ids) keeps it there,
    or `torch.isin` fails on a GPU with "Expected all tensors to be on the same device".
    """
    plain: list = []
    if settings.min_new_tokens > 0 and eos:
        plain.append(MinNewTokensLengthLogitsProcessor(prompt_len, settings.min_new_tokens, sorted(eos),
                                                       device=str(device)))
    if settings.repetition_penalty != 1.0:
        plain.append(RepetitionPenaltyLogitsProcessor(settings.repetition_penalty))
    if settings.no_repeat_ngram_size > 0:
        plain.append(NoRepeatNGramLogitsProcessor(settings.no_repeat_ngram_size))
    warpers_t: list = []
    warpers_cut: list = []
    if settings.strategy == "sample":
        if settings.temperature != 1.0:
            warpers_t.append(TemperatureLogitsWarper(settings.temperature))
        if settings.top_k:
            warpers_cut.append(TopKLogitsWarper(top_k=settings.top_k))
        if settings.top_p < 1.0:
            warpers_cut.append(TopPLogitsWarper(top_p=settings.top_p))
    return plain + warpers_t + warpers_cut, [plain, warpers_t, warpers_cut]


def generation_config(model, tokenizer, settings: DecodeSettings) -> GenerationConfig:
    """A generation config with the strategy's search settings and every warper off.

    The warpers and penalties travel as explicit processors (see `build_processors`), so the
    model's own generation_config defaults (e.g. a temperature) cannot sneak in.
    """
    base = getattr(model, "generation_config", None)
    eos = getattr(base, "eos_token_id", None) if base is not None else None
    if eos is None:
        eos = tokenizer.eos_token_id
    pad = getattr(base, "pad_token_id", None) if base is not None else None
    if pad is None:
        # a model trained from scratch may have no end token at all: it then generates to max_new_tokens
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (
            eos if isinstance(eos, int) else (eos[0] if eos else None))
    beam = settings.strategy == "beam"
    # Unset values are filled from the model's generation_config, then from transformers'
    # defaults (top_k=50!), so the neutral values are spelled out; warpers only matter when
    # sampling, and setting them otherwise only earns a warning.
    neutral = dict(temperature=1.0, top_k=0, top_p=1.0, min_p=None, typical_p=1.0) if settings.strategy == "sample" else {}
    return GenerationConfig(
        max_new_tokens=settings.max_new_tokens,
        do_sample=settings.strategy == "sample",
        num_beams=settings.num_beams if beam else 1,
        num_return_sequences=settings.num_return_sequences,
        length_penalty=settings.length_penalty if beam else 1.0,
        early_stopping=settings.early_stopping if beam else False,
        repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        **neutral,
        eos_token_id=eos,
        pad_token_id=pad,
        bos_token_id=getattr(base, "bos_token_id", None) if base is not None else None,
    )


def _eos_ids(config: GenerationConfig) -> set[int]:
    eos = config.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def _trim(ids: list[int], eos: set[int]) -> tuple[list[int], bool]:
    """Generated ids up to and including the first EOS; True when one was found."""
    for i, t in enumerate(ids):
        if t in eos:
            return ids[: i + 1], True
    return ids, False
