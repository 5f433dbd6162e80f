"""The Anatomy tab's snippet (`/anatomy`): the model's own forward with `output_hidden_states=True`, the
residual stream's size at the chosen token after each layer, and for a decoder the logit lens (each layer's
hidden state through the final norm and the LM head)."""

from __future__ import annotations

from backend.snippets.attention import EAGER, encode_lines
from backend.snippets.checkpoint import loading
from backend.snippets.text import script

FINAL_NORM = {"llama": "model.model.norm", "gpt2": "model.transformer.ln_f"}  # the decoders' final norm


def _lens(result: dict) -> list[str]:
    lens, family = result.get("lens") or {}, result.get("family", "")
    if not lens or family not in FINAL_NORM:
        return []
    return [
        f"positions = {[int(p) for p in lens.get('positions') or []]}  # the last positions the lens reads",
        f"# the logit lens: each layer's state through the final norm and the LM head (the last state is "
        "normed already: it gives the model's own logits)",
        "with torch.inference_mode():",
        f"    logits = [model.get_output_embeddings()({FINAL_NORM[family]}(h[0, positions])) "
        "for h in hidden[:-1]]",
        "    logits.append(out.logits[0, positions])",
        "lens = [l.softmax(-1).topk(5) for l in logits]  # per layer: top-5 next tokens and probabilities",
        "for layer, top in enumerate(lens):",
        "    print(layer, [tokenizer.decode([i]) for i in top.indices[:, 0].tolist()], [round(p, 3) for p in top.values[:, 0].tolist()])"]


def anatomy(inputs: dict, result: dict) -> str:
    family = result.get("family", "")
    causal = family != "bert"
    auto = "AutoModelForCausalLM" if causal else "AutoModel"
    load = loading(result.get("model") or {}, auto, options=EAGER)
    token = int((result.get("stream") or {}).get("token_index", -1))
    forward = ["with torch.inference_mode():", "    out = model(**inputs, output_hidden_states=True)",
               "hidden = out.hidden_states  # the embeddings, then the residual stream after each layer"]
    stream = "hidden"
    if result.get("last_compared_after_final_norm"):  # hidden[-1] is after the final norm; the app's stream before it
        final = "ln_f" if family == "gpt2" else "norm"
        forward = ["before_norm = {}  # the last layer's output as it enters the final norm (hidden[-1] is after it)",
                   f"hook = model.base_model.{final}.register_forward_pre_hook("
                   "lambda module, args: before_norm.setdefault('x', args[0]))",
                   *forward, "hook.remove()",
                   "stream = [*hidden[:-1], before_norm['x']]  # the residual stream as the app shows it"]
        stream = "stream"
    run = encode_lines(str(inputs.get("text") or ""), str(inputs.get("text_b") or ""), causal) + [
        *forward,
        f"token = {token}",
        f"norms = [float(h[0, token].norm()) for h in {stream}]  # the stream's size at the token, layer by layer",
        "print([round(n, 2) for n in norms])"]
    adds = ("# What the app adds: every layer recomputed from its weights by hand (the per-layer max abs diff "
            "from these hidden states), the masks, what attention and MLP add, and the parameter budget.")
    return script(["import torch", *load.imports], load.lines, run, _lens(result), [adds])
