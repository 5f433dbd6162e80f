"""The Efficiency tab's int8 snippet (`/efficiency`, chapter 8): the decoder and its dynamic int8 copy
(`torch.ao.quantization.quantize_dynamic`, int8 weights with one scale per output row), greedy on the run's
prompts, and perplexity on the shipped texts, fp32 against int8."""

from __future__ import annotations

from backend.snippets.checkpoint import loading
from backend.snippets.text import literal, script

TEXTS_FILE = "assets/data/efficiency/texts.jsonl"  # the shipped paragraphs, in the app's repository
APP_INT8 = ("# What the app adds: its int8 Linear keeps these int8 weights and kernels but quantizes a prompt's "
            "activations with one scale per group of tokens of like range (8-bit where the CPU has VNNI), not one "
            "7-bit scale per call, so its int8 tokens and perplexity can differ from this copy's; it also times "
            "both, weighs them, and compares the encoder's labels.")


def efficiency(inputs: dict, result: dict) -> str:
    dec = result.get("decoder") or {}
    settings = result.get("settings") or {}
    load = loading(dec.get("model") or result.get("model") or {}, "AutoModelForCausalLM")
    prompts = [p.get("prompt", "") for p in dec.get("prompts") or []]
    new = int(settings.get("new_tokens") or (dec.get("agreement") or {})["new_tokens"])  # the run's own
    n_texts, cut = int(settings["texts"]), int(settings["perplexity_max_tokens"])
    quantize = [
        "from torch.ao.quantization import per_channel_dynamic_qconfig",
        "",
        "int8 = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), "
        "{torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)",
        APP_INT8]
    greedy = [
        f"prompts = {literal(prompts)}",
        "outputs = {}",
        'for name, m in (("fp32", model), ("int8", int8)):',
        "    outputs[name] = []",
        "    for prompt in prompts:",
        '        enc = tokenizer(prompt, return_tensors="pt")',
        f"        out = m.generate(**enc, max_new_tokens={new}, pad_token_id=tokenizer.pad_token_id)",
        "        outputs[name].append(out[0, enc.input_ids.shape[1]:].tolist())",
        'same = sum(a == b for a, b in zip(outputs["fp32"], outputs["int8"]))',
        f'print(f"greedy: {{same}} of {{len(prompts)}} prompts give the same {new} tokens")']
    ppl = [
        f"# the first {n_texts} of the paragraphs the app ships ({TEXTS_FILE} in its repository: run from a checkout)",
        f"texts = [json.loads(line)[\"text\"] for line in open({TEXTS_FILE!r}, encoding=\"utf-8\") if line.strip()]"
        f"[:{n_texts}]",
        "",
        "def perplexity(m):  # exp(the mean negative log-likelihood per predicted token, over all texts)",
        "    nll, count = 0.0, 0",
        "    for text in texts:",
        f'        ids = tokenizer(text, return_tensors="pt", truncation=True, max_length={cut}).input_ids',
        "        with torch.inference_mode():",
        "            loss = m(input_ids=ids, labels=ids).loss  # the mean over the text's ids.shape[1] - 1 predictions",
        "        nll, count = nll + float(loss) * (ids.shape[1] - 1), count + ids.shape[1] - 1",
        "    return math.exp(nll / count)",
        "",
        'ppl = {"fp32": perplexity(model), "int8": perplexity(int8)}',
        "print(ppl)"]
    imports = ["import copy", "import json", "import math", "import torch", *load.imports]
    return script(imports, load.lines, quantize, greedy, ppl)
