"""Real tokenizers from the packaged models, and tiny random models built from configs.

Unit tests run our code on these: real tokenisation, exact arithmetic, no weights files.
"""

from __future__ import annotations

import functools
from pathlib import Path

from backend.runtime import config
from backend.hub import package_dir
from backend.hub.conversion import ensure_converted


@functools.lru_cache(maxsize=None)
def minilm_dir() -> Path:
    return package_dir(config.MINILM["module"]) / config.MINILM["subdir"]


@functools.lru_cache(maxsize=None)
def smollm2_dir() -> Path:
    """The SmolLM2 safetensors folder (converted from the packaged GGUF once, then cached)."""
    gguf = package_dir(config.SMOLLM2["module"]) / config.SMOLLM2["gguf_file"]
    return ensure_converted(gguf)[0]


@functools.lru_cache(maxsize=None)
def minilm_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_dir()))


@functools.lru_cache(maxsize=None)
def smollm2_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(smollm2_dir()))


def tiny_bert(vocab_size: int | None = None, seed: int = 0, **overrides):
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    cfg = dict(
        vocab_size=vocab_size or minilm_tokenizer().vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=512,
        attn_implementation="eager",
    )
    cfg.update(overrides)
    return BertModel(BertConfig(**cfg)).eval()


def tiny_llama(vocab_size: int | None = None, seed: int = 0, **overrides):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tok = smollm2_tokenizer()
    cfg = dict(
        vocab_size=vocab_size or len(tok),
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=2,
        intermediate_size=64,
        max_position_embeddings=2048,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        attn_implementation="eager",
    )
    cfg.update(overrides)
    return LlamaForCausalLM(LlamaConfig(**cfg)).eval()


def tiny_gpt2(vocab_size: int | None = None, seed: int = 0, **overrides):
    """GPT-2 (learned positions, fused qkv Conv1D) with the SmolLM2 tokenizer's vocabulary."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = dict(
        vocab_size=vocab_size or len(smollm2_tokenizer()),
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=512,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )
    cfg.update(overrides)
    return GPT2LMHeadModel(GPT2Config(**cfg)).eval()


def save_tiny(model, tokenizer, folder: Path) -> Path:
    """Save a tiny model with a real tokenizer, so the hub can load it as a role override."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
