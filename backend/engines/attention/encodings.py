"""Positional information: sinusoidal encodings, learned position embeddings, rotary angles.

Transformers see a set of tokens; position has to be added. Three ways are shown in the tab:
the original paper's fixed sinusoids, BERT's learned position vectors (their cosine
similarity shows the model learned "nearby positions are alike"), and llama's rotary
embeddings, which rotate each query/key pair of dimensions by an angle proportional to the
position, at a different frequency per pair.
"""

from __future__ import annotations

import numpy as np
import torch

from backend.runtime.errors import InputError


def sinusoidal_encoding(n_positions: int, d_model: int) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...) (Vaswani et al. 2017)."""
    if n_positions < 1 or d_model < 2:
        raise InputError("Positions and dimensions must be at least 1 and 2.")
    pos = np.arange(n_positions, dtype=np.float64)[:, None]
    i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angles = pos / np.power(10000.0, i / d_model)
    pe = np.zeros((n_positions, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe.astype(np.float32)


def learned_position_embeddings(model) -> np.ndarray | None:
    """The encoder's learned absolute position table (positions x dims), or None if it has none."""
    base = getattr(model, model.base_model_prefix, model)
    emb = getattr(getattr(base, "embeddings", None), "position_embeddings", None)
    if emb is None:
        emb = getattr(base, "wpe", None)  # GPT-2 learns positions too
    if emb is None:
        return None
    return emb.weight.detach().float().cpu().numpy()


def cosine_similarity_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of the rows of `vectors`."""
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms == 0, 1.0, norms)
    return (v @ v.T).astype(np.float32)


def rope_parameters(config) -> dict:
    """rope_type and rope_theta, from transformers 5's `rope_parameters` or older attributes."""
    params = dict(getattr(config, "rope_parameters", None) or {})
    params.setdefault("rope_type", (getattr(config, "rope_scaling", None) or {}).get("rope_type", "default"))
    params.setdefault("rope_theta", getattr(config, "rope_theta", 10000.0))
    return params


def head_dim(config) -> int:
    return int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)


def rotary_inv_freq(config) -> np.ndarray:
    """theta_i = base^(-2i/d) for i < d/2: the rotation frequency (radians per position) of each pair.

    Computed in float32, as transformers does: a float64 table differs in the last bit, and
    that bit matters downstream (SmolLM2's residual stream reaches ~22,000 on the first token,
    where one float32 step is 0.002), so the Anatomy tab could not match the model exactly.
    """
    d = head_dim(config)
    base = float(rope_parameters(config)["rope_theta"])
    exponents = torch.arange(0, d, 2, dtype=torch.int64).float() / d
    return (1.0 / (base ** exponents)).numpy()


def rotary_cos_sin(config, n_positions: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin (T, d) of the angles pos * theta_i, each angle used for dims i and i + d/2.

    Written from the definition; tests prove it equals the model's own rotary module.
    """
    inv_freq = torch.from_numpy(rotary_inv_freq(config)).to(device)
    pos = torch.arange(n_positions, dtype=torch.float32, device=device)
    freqs = pos[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotary_cos_sin_for(model, n_positions: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin for this model: our own formula for plain RoPE; the model's module for scaled variants
    (llama3, yarn, dynamic...) whose frequency tweaks are not part of this lesson."""
    if rope_parameters(model.config).get("rope_type", "default") == "default":
        return rotary_cos_sin(model.config, n_positions, device=device)
    base = getattr(model, model.base_model_prefix, model)
    pos = torch.arange(n_positions, device=device)[None]
    dummy = torch.zeros(1, n_positions, 1, dtype=torch.float32, device=device)
    with torch.inference_mode():
        cos, sin = base.rotary_emb(dummy, pos)
    return cos[0].float(), sin[0].float()


def rotary_summary(config) -> dict:
    """Plain data for the rotary plot: frequencies, wavelengths (in tokens) and the one-line story."""
    inv = rotary_inv_freq(config)
    return {
        "head_dim": head_dim(config),
        "rope_theta": float(rope_parameters(config)["rope_theta"]),
        "rope_type": rope_parameters(config).get("rope_type", "default"),
        "inv_freq": inv.tolist(),
        "wavelength_tokens": (2 * np.pi / inv).tolist(),
        "explanation": (
            "Rotary embeddings rotate each pair of query/key dimensions by position x frequency, "
            "so the dot product q.k depends only on the distance between the two tokens."
        ),
    }


def position_report(model, n_positions: int = 128) -> dict:
    """Everything the Positions panel shows for one model, as plain data (numpy arrays inside)."""
    cfg = model.config
    d_model = int(getattr(cfg, "hidden_size", 128))
    report = {
        "sinusoidal": sinusoidal_encoding(n_positions, min(d_model, 128)),
        "learned_similarity": None,
        "rotary": None,
        "model_type": getattr(cfg, "model_type", ""),
    }
    table = learned_position_embeddings(model)
    if table is not None:
        report["learned_similarity"] = cosine_similarity_matrix(table[:n_positions])
    if hasattr(getattr(model, model.base_model_prefix, model), "rotary_emb"):  # only rotary models have one
        report["rotary"] = rotary_summary(cfg)
    return report
