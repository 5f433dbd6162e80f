"""The Interventions tab's snippet (`/intervene`, chapter 3): the same text through the same model as it is and
with the run's edits applied by PyTorch hooks: a forward *pre*-hook on the attention's output projection scales
each named head's slice of its input (the heads sit side by side there, `head_dim` wide each), a forward hook on a
sub-layer's output projection scales what that sub-layer adds to the residual stream. A decoder: the next token's
probabilities both ways and greedy `generate` both ways; an encoder: the mean-pooled sentence embedding's cosine."""

from __future__ import annotations

from backend.snippets.checkpoint import loading
from backend.snippets.text import literal, script

# per family (backend/engines/attention/families.py): the blocks under `model.base_model`, and in a block the
# attention's output projection and the MLP's
SITES = {"llama": ("layers", "self_attn.o_proj", "mlp.down_proj"),
         "gpt2": ("h", "attn.c_proj", "mlp.c_proj"),
         "bert": ("encoder.layer", "attention.output.dense", "output.dense")}


def _edits(result: dict) -> tuple[dict, dict]:
    """({layer: {head: factor}}, {(layer, "attn"|"mlp"): factor}) from the run's resolved edits."""
    heads: dict[int, dict[int, float]] = {}
    parts: dict[tuple[int, str], float] = {}
    for e in result.get("edits") or []:
        if e.get("part") == "head":
            heads.setdefault(int(e["layer"]), {})[int(e["head"])] = float(e["scale"])
        else:
            parts[(int(e["layer"]), str(e["part"]))] = float(e["scale"])
    return heads, parts


def _hooks(result: dict) -> list[str]:
    blocks, attn, mlp = SITES.get(result.get("family") or "llama", SITES["llama"])
    heads, parts = _edits(result)
    spec = result.get("spec") or ""
    return [
        f"# the run's spec {spec!r}" if spec else "# the run's spec was empty: nothing is changed",
        (f"HEAD_DIM = {int(result['head_dim'])}" if result.get("head_dim") else
         'HEAD_DIM = getattr(model.config, "head_dim", None) or model.config.hidden_size // model.config.num_attention_heads')
        + "  # the projection after attention reads the heads side by side, HEAD_DIM features each",
        f"heads = {literal(heads)}  # layer -> {{head: factor}} (0 = removed)",
        f"sublayers = {literal(parts)}  # (layer, sub-layer) -> factor: what it adds to the residual stream",
        "",
        "def scale_heads(factors):",
        "    def pre(module, args):  # before the output projection: each named head's slice times its factor",
        "        x = args[0].clone()",
        "        for h, f in factors.items():",
        "            x[..., h * HEAD_DIM:(h + 1) * HEAD_DIM] *= f",
        "        return (x, *args[1:])",
        "    return pre",
        "",
        "def scale_output(f):",
        "    return lambda module, args, output: output * f",
        "",
        f"blocks = model.base_model.{blocks}",
        "",
        "def hooked():  # the edits on, as hooks; remove them with h.remove()",
        f"    handles = [blocks[l].{attn}.register_forward_pre_hook(scale_heads(f)) for l, f in heads.items()]",
        "    for (l, part), f in sublayers.items():",
        f"        site = blocks[l].{attn} if part == \"attn\" else blocks[l].{mlp}",
        "        handles.append(site.register_forward_hook(scale_output(f)))",
        "    return handles"]


def _decoder(inputs: dict, result: dict) -> list[str]:
    new = int((result.get("continuation") or {}).get("new_tokens") or 0)
    k = int(float(inputs.get("top_k") or (result.get("next_token") or {})["top_k"]))  # as the run asked
    lines = ["def run():  # the next token's probabilities after the text, and the greedy continuation",
             "    with torch.inference_mode():",
             "        logits = model(**enc).logits[0, -1].double()"]
    if new > 0:
        lines += [f"        out = model.generate(**enc, max_new_tokens={new}, do_sample=False, "
                  "pad_token_id=tokenizer.eos_token_id)",
                  "    return logits.log_softmax(-1), out[0, enc.input_ids.shape[1]:].tolist()"]
    else:
        lines += ["    return logits.log_softmax(-1), []"]
    return lines + [
        "",
        "logp_before, tokens_before = run()",
        "handles = hooked()",
        "logp_after, tokens_after = run()",
        "for h in handles:",
        "    h.remove()",
        "",
        "p_before, p_after = logp_before.exp(), logp_after.exp()",
        "kl = float((p_before * (logp_before - logp_after)).sum())  # KL(before || after), nats",
        f"top = list(dict.fromkeys(p_before.topk({k}).indices.tolist() + p_after.topk({k}).indices.tolist()))",
        "for i in sorted(top, key=lambda i: -float(p_before[i])):",
        "    print(repr(tokenizer.decode([i])), round(float(p_before[i]), 4), round(float(p_after[i]), 4))",
        'print("KL", round(kl, 4))',
        'print("as it is:", repr(tokenizer.decode(tokens_before)))',
        'print("with the edits:", repr(tokenizer.decode(tokens_after)))']


ENCODER_RUN = [
    "def sentence():  # the last hidden states, mean-pooled and normalised (the sentence embedding)",
    "    with torch.inference_mode():",
    "        hidden = model(**enc).last_hidden_state[0].double()",
    "    return torch.nn.functional.normalize(hidden.mean(0), dim=-1)",
    "",
    "before = sentence()",
    "handles = hooked()",
    "after = sentence()",
    "for h in handles:",
    "    h.remove()",
    'print("cosine before/after", float(before @ after))']

ADDS_DECODER = ("# What the app adds: its spec parser (L2H3=0, L1H*=0, L3.mlp=0), the top-1 flips and KL at every "
                "position, the same edits checked by editing the projections' weights, and the plots.")
ADDS_ENCODER = ("# What the app adds: its spec parser (L2H3=0, L1H*=0, L3.mlp=0), each token's cosine, the "
                "sentiment classifier built on this encoder with the same edits, the same edits checked by editing "
                "the projections' weights, and the plots.")


def intervene(inputs: dict, result: dict) -> str:
    decoder = (result.get("role") or inputs.get("model") or "decoder") == "decoder"
    load = loading(result.get("model") or {}, "AutoModelForCausalLM" if decoder else "AutoModel")
    text = [f"text = {literal(result.get('text') or inputs.get('text', ''))}",
            'enc = tokenizer(text, return_tensors="pt")']
    run = _decoder(inputs, result) if decoder else ENCODER_RUN
    return script(["import torch", *load.imports], load.lines, text, _hooks(result), run,
                  [ADDS_DECODER if decoder else ADDS_ENCODER])
