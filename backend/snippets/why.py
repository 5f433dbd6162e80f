"""The Why tab's snippet (`/attribute`): the explained quantity written as a forward function, then Captum's
LayerIntegratedGradients (the run's steps and baseline: [PAD] at every scored token, special tokens kept),
LayerGradientXActivation and FeatureAblation (occlusion: a token removed from the sequence), each summed to one
score per token. Written for the sentiment classifier (the one trained here or a checkpoint's head) and the
decoder's next token; another task's snippet loads its model and says which quantity the app explains."""

from __future__ import annotations

from backend.runtime.config import METHOD_FINETUNED
from backend.snippets.checkpoint import loading
from backend.snippets.pipelines import finetuned_loading, trained_sentiment_folder
from backend.snippets.text import literal, script

IG_BATCH = 8  # the app's internal_batch_size (backend/why/methods.py)
CAPTUM = "from captum.attr import FeatureAblation, LayerGradientXActivation, LayerIntegratedGradients"


def _sentiment(result: dict) -> tuple[list[str], list[str], list[str]]:
    """(imports, loading lines, forward lines) for a sequence classifier's probability of the run's label."""
    model, label = result.get("model") or {}, (result.get("prediction") or {}).get("label", "")
    folder = trained_sentiment_folder(model) if model.get("method") == METHOD_FINETUNED else None
    if folder is not None:
        imports, load = finetuned_loading(folder)
        return imports, load + ["model = encoder", f"LABEL = labels.index({label!r})"], [
            f"def forward(ids, mask):  # the probability of {label}: the mean-pooled states through the head",
            "    hidden = encoder(input_ids=ids, attention_mask=mask).last_hidden_state",
            "    m = mask.unsqueeze(-1).to(hidden.dtype)",
            "    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)",
            '    return torch.softmax(pooled @ head["weight"].T + head["bias"], dim=-1)[:, LABEL]']
    load = loading(model, "AutoModelForSequenceClassification")
    return ["import torch", *load.imports], load.lines + [f"LABEL = model.config.label2id[{label!r}]"], [
        f"def forward(ids, mask):  # the probability of {label}",
        "    return model(input_ids=ids, attention_mask=mask).logits.softmax(-1)[:, LABEL]"]


def _next_token(result: dict) -> tuple[list[str], list[str], list[str]]:
    p = result.get("prediction") or {}
    target, contrast = p.get("target") or {}, p.get("contrast")
    load = loading(result.get("model") or {}, "AutoModelForCausalLM")
    ids = [f"TARGET = {int(target.get('id', 0))}  # {target.get('token', '')!r}"]
    if contrast:
        ids.append(f"CONTRAST = {int(contrast['id'])}  # {contrast.get('token', '')!r}")
        read = "    return logits[:, TARGET] - logits[:, CONTRAST]"
        what = f"logit({target.get('token', '')!r}) - logit({contrast.get('token', '')!r})"
    else:
        read = "    return logits.softmax(-1)[:, TARGET]"
        what = f"the probability that the next token is {target.get('token', '')!r}"
    return ["import torch", *load.imports], load.lines + ids, [
        f"def forward(ids, mask):  # {what}",
        "    logits = model(input_ids=ids, attention_mask=mask).logits[:, -1].float()", read]


def _methods(result: dict) -> list[str]:
    methods = result.get("methods") or []
    steps = int(((result.get("checks") or {}).get("completeness") or {}).get("steps")
                or (result.get("settings") or {}).get("steps") or 32)
    lines = ['enc = tokenizer(text, return_tensors="pt")',
             "ids, mask = enc.input_ids, enc.attention_mask",
             "special = torch.tensor([[t in tokenizer.all_special_ids for t in ids[0].tolist()]])",
             "base_id = next(i for i in (tokenizer.pad_token_id, tokenizer.mask_token_id, tokenizer.unk_token_id,",
             "                           tokenizer.eos_token_id) if i is not None)",
             "baseline = ids.masked_fill(~special, base_id)  # [PAD] at every scored token, special tokens kept",
             "scored = (~special[0]).nonzero().flatten()  # the positions that get a score",
             "embeddings = model.get_input_embeddings()"]
    if "integrated_gradients" in methods:
        lines += ["lig = LayerIntegratedGradients(forward, embeddings)",
                  f"attributions, delta = lig.attribute(ids, baselines=baseline, additional_forward_args=(mask,), "
                  f"n_steps={steps}, internal_batch_size={IG_BATCH}, return_convergence_delta=True)",
                  "integrated_gradients = attributions.sum(-1)[0, scored].detach()  # one score per token"]
    if "gradient_x_input" in methods:
        lines += ["gxi = LayerGradientXActivation(forward, embeddings).attribute(ids, additional_forward_args=(mask,))",
                  "gradient_x_input = gxi.sum(-1)[0, scored].detach()"]
    if "occlusion" in methods:
        lines += ["",
                  "def without(keep):  # keep: (1, tokens) 1 = kept, 0 = removed from the sequence (the rest close up)",
                  "    drop = set(scored[keep[0] < 0.5].tolist())",
                  "    row = torch.tensor([[t for i, t in enumerate(ids[0].tolist()) if i not in drop]])",
                  "    with torch.no_grad():",
                  "        return forward(row, torch.ones_like(row)).double()",
                  "",
                  "occlusion = FeatureAblation(without).attribute(torch.ones(1, len(scored)), baselines=0.0,",
                  "                                               feature_mask=torch.arange(len(scored))[None])[0]"]
    names = [m for m in ("integrated_gradients", "gradient_x_input", "occlusion") if m in methods]
    if names:
        lines += ["for i, p in enumerate(scored.tolist()):",
                  f"    print(tokenizer.convert_ids_to_tokens(int(ids[0, p])), "
                  + ", ".join(f"round(float({n}[i]), 4)" for n in names) + ")"]
    return lines


def attribute(inputs: dict, result: dict) -> str:
    task = result.get("task") or inputs.get("task") or "sentiment"
    adds = ("# What the app adds: attention rollout beside these, the deletion test (which ranking removes the "
            "quantity fastest, against random orders), the methods' agreement, and IG's steps raised while its "
            "completeness gap is over 5%.")
    if task == "next_token":
        imports, load, forward = _next_token(result)
    elif task == "sentiment":
        imports, load, forward = _sentiment(result)
    else:
        model = loading(result.get("model") or {}, "AutoModel")
        note = (f"# This run explained {result.get('quantity', task)!r} ({task}): the app's forward for that task "
                "(backend/why/tasks.py) is not written out here; with a forward(ids, mask) returning it, the "
                "Captum calls are those of a sentiment run.")
        return script(["import torch", CAPTUM, *model.imports], model.lines, [note])
    text = [f"text = {literal(result.get('text') or inputs.get('text', ''))}"]
    return script([*imports, CAPTUM], load, forward, text + _methods(result), [adds])
