"""Attention while generating, on a tiny random llama: the rows taken from one forward over the
final text equal the rows the step-by-step generation computed (KV cache, one token at a time),
for one head and for the mean; bad layer/head/n are refused."""

from __future__ import annotations

import json

import pytest
import torch

from backend.decoding import attention_growth as ag
from backend.engines.generation import generate
from backend.runtime.errors import InputError
from tests.helpers.tiny_models import smollm2_tokenizer, tiny_llama

PROMPT = "Transformers are the"


@pytest.fixture(scope="module")
def tok():
    return smollm2_tokenizer()


@pytest.fixture(scope="module")
def tiny(tok):
    return tiny_llama(seed=1, pad_token_id=tok.eos_token_id, initializer_range=0.5, max_position_embeddings=256)


def step_by_step_rows(model, prompt_ids, new, layer, head):
    """The reference: attention of the last query at each generation step, with the KV cache."""
    rows, past = [], None
    x = torch.tensor([prompt_ids])
    with torch.no_grad():
        for t in new:
            out = model(input_ids=x, past_key_values=past, use_cache=True, output_attentions=True)
            past = out.past_key_values
            att = out.attentions[layer][0].float()
            rows.append((att.mean(0) if head is None else att[head])[-1].tolist())
            x = torch.tensor([[t]])
    return rows


@pytest.mark.parametrize("layer, head", [(0, 0), (1, 5), (-1, None)])
def test_rows_equal_the_step_by_step_attention(tiny, tok, layer, head):
    out = ag.attention_growth(tiny, tok, PROMPT, n=6, layer=layer, head=head)
    greedy = generate.decode(tiny, tok, PROMPT, {"strategy": "greedy", "max_new_tokens": 6}).outputs[0]["token_ids"]
    assert out["generated"] == greedy and len(out["rows"]) == len(greedy)
    ref = step_by_step_rows(tiny, out["token_ids"][: out["prompt_len"]], out["generated"], layer, head)
    plen = out["prompt_len"]
    for i, (row, want) in enumerate(zip(out["rows"], ref)):
        seen = row[: plen + i]
        assert len(want) == len(seen) and all(c is None for c in row[plen + i:])
        assert seen == pytest.approx(want, abs=1e-5)
        assert sum(seen) == pytest.approx(1.0, abs=1e-4)
    assert out["head"] == ("mean" if head is None else head) and out["layer"] == layer % 2
    json.dumps(out)


def test_a_given_path_is_used_instead_of_greedy(tiny, tok):
    out = ag.attention_growth(tiny, tok, PROMPT, path=[5, 6, 7], layer=0, head="mean")
    assert out["generated"] == [5, 6, 7] and out["source"] == "path" and len(out["rows"]) == 3


@pytest.mark.parametrize("kw, message", [
    ({"layer": 2}, "layer"), ({"layer": -3}, "layer"), ({"head": 6}, "head"), ({"head": "x"}, "head"),
    ({"n": 0}, "n"), ({"n": 33}, "n"), ({"path": [10**9]}, "path step 1"),
])
def test_bad_requests_are_refused(tiny, tok, kw, message):
    with pytest.raises(InputError, match=message):
        ag.attention_growth(tiny, tok, PROMPT, **{"n": 2, **kw})


def test_a_model_without_attention_weights_says_so(tok):
    sdpa = tiny_llama(seed=1, attn_implementation="sdpa", max_position_embeddings=256)
    try:
        out = ag.attention_growth(sdpa, tok, PROMPT, n=2)
    except InputError as exc:
        assert "eager" in str(exc)
    else:  # transformers fell back to eager for output_attentions: then the rows must be real
        assert len(out["rows"]) == 2 and out["rows"][0][0] is not None
