"""A session's trained classifier as one differentiable model, for the Why tab's attributions.

The Why tab (backend.why) may not import this tab; it asks
`hub.session_models.serve("why-classifier", session_id, method)`, which reaches `classifier`
here. Both of the session's classifiers become a module whose `forward(input_ids,
attention_mask).logits` are the logits `/predict_trained` turns into probabilities:

- fine-tuning: the encoder copy with the session's fine-tuned weights and linear head
  (finetune.EncoderClassifier, mean-pooled);
- feature extraction: the frozen encoder, mean-pooled, L2-normalised, standardised with the
  probe's mean and scale, then `@ weight + bias` (probe.Probe.logits), in torch.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from backend import hub
from backend.engines.classify import finetune
from backend.engines.embedding.vectors import mean_pool
from backend.train import gpu, use
from backend.train.store import get_store


class _Output:
    def __init__(self, logits):
        self.logits = logits


class _Classifier(nn.Module):
    def __init__(self, inner: nn.Module, config, probe=None):
        super().__init__()
        self.inner = inner
        self.config = config
        self.probe = None
        if probe is not None:
            self.register_buffer("mean", torch.as_tensor(probe.mean, dtype=torch.float32))
            self.register_buffer("scale", torch.as_tensor(probe.scale, dtype=torch.float32))
            self.register_buffer("weight", torch.as_tensor(probe.weight, dtype=torch.float32))
            self.register_buffer("bias", torch.as_tensor(probe.bias, dtype=torch.float32))
            self.probe = True

    def forward(self, input_ids, attention_mask=None, **_):
        if attention_mask is None:
            attention_mask = input_ids.new_ones(input_ids.shape)
        if self.probe is None:
            return _Output(self.inner(input_ids, attention_mask)[0])
        hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state.float()
        x = nn.functional.normalize(mean_pool(hidden, attention_mask), p=2, dim=1)
        return _Output(((x - self.mean) / self.scale) @ self.weight + self.bias)


def classifier(session_id: str, method: str = "") -> dict | None:
    """{"model", "tokenizer", "describe"} of the session's classifier (`method` "" = its best), or
    None when the session has trained none. Call it inside the caller's gpu_task."""
    s = get_store().peek(session_id)
    t = s.trained if s is not None else None
    if t is None:
        return None
    method = use.pick(t, method)
    base = hub.load(gpu.ROLE, t.override)
    cfg = copy.deepcopy(base.model.config)
    cfg.id2label = dict(enumerate(t.labels))
    cfg.label2id = {l: i for i, l in enumerate(t.labels)}
    cfg.num_labels = len(t.labels)
    cfg.architectures = ["MeanPoolForSequenceClassification"]
    if method == "finetune":
        inner = finetune.EncoderClassifier(copy.deepcopy(base.model).float(), len(t.labels))
        inner.load_state_dict(t.weights)
        model = _Classifier(inner, cfg)
    else:
        model = _Classifier(base.model, cfg, probe=t.probe)
    return {"model": model.eval().to(base.device), "tokenizer": base.tokenizer, "describe": use.describe(t, method)}
