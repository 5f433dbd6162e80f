"""The Efficiency tab's int8 snippet (`/efficiency`, chapter 8): the decoder and its dynamic int8 copy (the app's
own `int8_copy`, read from a checkout: torch.ao's int8 Linear, int8 weights with one scale per output row, its
activations scaled per group of tokens), greedy on the run's prompts, and perplexity on the shipped texts, fp32
against int8."""

from __future__ import annotations

from backend.snippets.attention import EAGER
from backend.snippets.checkpoint import loading
from backend.snippets.text import literal, script

# What torch prints in red where a notebook quantizes, said above the call (not to be taken for an error)
INT8_WARNINGS = ["# torch may print a DeprecationWarning and a UserWarning here: torch.ao.quantization and its quantized",
                 "# tensors are deprecated in favour of the torchao package. They still work, and they are what the app",
                 "# measured (torchao ships no x86 int8 kernels), so the notebook uses them to give the app's numbers back."]

TEXTS_FILE = "assets/data/efficiency/texts.jsonl"  # the shipped paragraphs, in the app's repository
APP_INT8 = "# What the app adds: it times both, weighs them, and compares the encoder's labels."


def efficiency(inputs: dict, result: dict) -> str:
    dec = result.get("decoder") or {}
    settings = result.get("settings") or {}
    # eager attention, as the app loads its decoder: in fp32 SDPA gives the same text, but the int8 copy's
    # activation scales amplify its last-digit differences (perplexity 53.8 instead of the page's 54.9, measured)
    load = loading(dec.get("model") or result.get("model") or {}, "AutoModelForCausalLM", options=EAGER)
    prompts = [p.get("prompt", "") for p in dec.get("prompts") or []]
    new = int(settings.get("new_tokens") or (dec.get("agreement") or {})["new_tokens"])  # the run's own
    n_texts, cut = int(settings["texts"]), int(settings["perplexity_max_tokens"])
    quantize = [
        "# The int8 copy is the app's own (backend/engines/compression/quantize.py, read as source): torch.ao's",
        "# dynamic int8 Linear (int8 weights, one scale per output row) whose activations get one scale per group of",
        "# tokens of like range. torch.ao.quantization.quantize_dynamic alone (one 7-bit scale per call) gives",
        "# other tokens and about twice the perplexity on this model: int8_copy(model, token_scales=False) shows it.",
        "from backend.engines.compression.quantize import int8_copy",
        "", *INT8_WARNINGS,
        "int8 = int8_copy(model)  # a deep copy: the fp32 model is left as it was",
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
        'for name, rows in outputs.items():  # each copy\'s greedy text, prompt by prompt',
        '    print(name, [tokenizer.decode(row) for row in rows])',
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
        "print({name: round(p, 3) for name, p in ppl.items()})"]
    imports = ["import json", "import math", "import torch", *load.imports]
    return script(imports, load.lines, quantize, greedy, ppl)
