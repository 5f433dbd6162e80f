"""Models and tokenizers of the GPU tier: random weights from configs shaped like the packaged models,
the packaged models' real tokenizers (from TLAB_GPU_TOKENIZERS when scripts/gpu_check.sh carried them)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import torch

# The device the tier runs on. TLAB_GPU_DRY_RUN=cpu runs the tier's code on the CPU instead, to check
# the tests themselves on a machine without a GPU: it proves nothing about CUDA.
DEVICE = os.environ.get("TLAB_GPU_DRY_RUN") or "cuda"


# ----------------------------------------------------------------------------- tokenizers


def _carried(name: str):
    root = os.environ.get("TLAB_GPU_TOKENIZERS")
    if not root:
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(Path(root) / name))


@functools.lru_cache(maxsize=None)
def minilm_tokenizer():
    carried = _carried("minilm")
    if carried is not None:
        return carried
    from tests.helpers.tiny_models import minilm_tokenizer as packaged

    return packaged()


@functools.lru_cache(maxsize=None)
def smollm2_tokenizer():
    carried = _carried("smollm2")
    if carried is not None:
        return carried
    from tests.helpers.tiny_models import smollm2_tokenizer as packaged

    return packaged()


# ----------------------------------------------------------------------------- models


SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_attention_heads=9, num_key_value_heads=3,
                    max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                    hidden_act="silu")  # SmolLM2-135M-Instruct's config.json (30 layers there)
MINILM_L6 = dict(hidden_size=384, intermediate_size=1536, num_attention_heads=12, max_position_embeddings=512,
                 hidden_act="gelu")  # all-MiniLM-L6-v2 (6 layers there)


def serving_dtype():
    """What the hub serves on this GPU (backend/runtime/device.py): bf16, or fp16 without bf16."""
    from backend.runtime.device import dtype_for

    return dtype_for("cuda") if DEVICE == "cuda" else torch.bfloat16


def llama(layers: int = 4, dtype=None, seed: int = 0):
    """A SmolLM2-135M-shaped llama with `layers` layers and random weights, on DEVICE, eager attention."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    tok = smollm2_tokenizer()
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), num_hidden_layers=layers, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id, **SMOLLM2_135M)
    # made in its dtype as from_pretrained makes it (rotary tables stay float32), then moved as the hub moves it
    model = AutoModelForCausalLM.from_config(cfg, dtype=dtype or serving_dtype(), attn_implementation="eager")
    return model.eval().to(DEVICE)


def bert(layers: int = 2, dtype=None, seed: int = 0):
    """A MiniLM-shaped BERT with `layers` layers and random weights, on DEVICE, eager attention."""
    from transformers import AutoModel, BertConfig

    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=minilm_tokenizer().vocab_size, num_hidden_layers=layers, **MINILM_L6)
    return AutoModel.from_config(cfg, dtype=dtype or serving_dtype(), attn_implementation="eager").eval().to(DEVICE)
