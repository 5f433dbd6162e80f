"""One family adapter per architecture (backend/engines/attention/families.py): Anatomy's recipes, the
attention maths and the interventions' hooks recognise a model the same way, and refuse one no
family covers in their own words."""

from __future__ import annotations

import pytest
from transformers import T5Config, T5ForConditionalGeneration

from backend.anatomy import scratch
from backend.anatomy.ops import UnsupportedModel
from backend.engines.attention import families
from backend.engines.attention import math as attention_math
from backend.interventions import hooks
from backend.runtime.errors import InputError, LabError
from tests.helpers.tiny_models import tiny_bert, tiny_gpt2, tiny_llama


@pytest.mark.parametrize("build,name,causal", [(tiny_bert, "bert", False), (tiny_llama, "llama", True),
                                               (tiny_gpt2, "gpt2", True)])
def test_every_tab_sees_the_same_family_and_the_same_blocks(build, name, causal):
    model = build()
    family = families.family_of(model)
    assert family.name == name and family.causal is causal
    assert scratch.family(model) == attention_math.architecture(model) == hooks.layout(model).family == name
    assert attention_math.is_causal(model) is causal
    blocks = families.blocks(model)
    assert len(blocks) == model.config.num_hidden_layers
    assert attention_math.layers_of(model) == blocks
    assert [s.o_proj for s in hooks.layout(model).layers] == [family.attn_out(b) for b in blocks]


def test_a_model_no_family_covers_is_refused_by_each_tab_in_words():
    t5 = T5ForConditionalGeneration(T5Config(vocab_size=32, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2))
    assert families.family_of(t5) is None
    for check, kind in ((scratch.family, UnsupportedModel), (attention_math.architecture, LabError),
                        (hooks.layout, InputError)):
        with pytest.raises(kind) as err:
            check(t5)
        assert "T5" in str(err.value) or "t5" in str(err.value)


def test_a_module_wrapping_a_transformer_is_found_inside_it():
    """The offline classifiers trained here wrap the encoder in a module of their own (no config)."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = tiny_bert()
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 3)

    w = Wrapped()
    assert families.family_of(w).name == "bert" and families.num_heads(w) == w.encoder.config.num_attention_heads
    assert families.blocks(w) == list(w.encoder.encoder.layer)
    assert hooks.layout(w).family == "bert" and len(hooks.layout(w).layers) == w.encoder.config.num_hidden_layers
