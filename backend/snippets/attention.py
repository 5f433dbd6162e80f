"""The Attention tab's snippet (`/attention`): the same text (or pair) through the same model with
`output_attentions=True`, every layer's and head's weights stacked as the endpoint returns them."""

from __future__ import annotations

from backend.snippets.checkpoint import loading
from backend.snippets.text import literal, script

EAGER = 'attn_implementation="eager"'  # SDPA and flash attention return no weights


def model_class(payload: dict) -> str:
    """The auto class the role's model loads with: a decoder (causal) is a causal LM, an encoder the bare model."""
    return "AutoModelForCausalLM" if payload.get("causal") else "AutoModel"


def encode_lines(text: str, text_b: str, causal: bool) -> list[str]:
    """`inputs` as the app tokenises the text: an encoder's own pair format; a decoder has none, so sentence B
    follows A after a space, without special tokens of its own."""
    lines = [f"text = {literal(text)}"]
    if not text_b.strip():
        return lines + ['inputs = tokenizer(text, return_tensors="pt")']
    lines.append(f"text_b = {literal(text_b)}")
    if not causal:
        return lines + ['inputs = tokenizer(text, text_b, return_tensors="pt")  # [CLS] a [SEP] b [SEP]']
    return lines + [
        "ids = tokenizer(text).input_ids + tokenizer(\" \" + text_b.lstrip(), add_special_tokens=False).input_ids",
        "inputs = {\"input_ids\": torch.tensor([ids])}  # a decoder has no pair format: B follows A"]


def attention(inputs: dict, result: dict) -> str:
    payload = result if "tokens" in result else result.get("payload") or {}
    causal = bool(payload.get("causal"))
    auto = model_class(payload)
    load = loading(payload.get("model") or result.get("model") or {}, auto, options=EAGER)
    text = str(inputs.get("text") or "")
    run = encode_lines(text, str(inputs.get("text_b") or ""), causal) + [
        "with torch.inference_mode():",
        "    out = model(**inputs, output_attentions=True)",
        "attentions = torch.stack([a[0] for a in out.attentions])  # layers x heads x queries x keys",
        'print(tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]), tuple(attentions.shape))']
    layers = payload.get("layers") or []
    if len(layers) == 1:
        run.append(f"print(attentions[{int(layers[0])}])  # the layer the run asked for")
    adds = ("# What the app adds: the bertviz head and model views, and per head its entropy and its share of "
            "attention to special, first, previous and own tokens (the top heads).")
    return script(["import torch", *load.imports], load.lines, run, [adds])
