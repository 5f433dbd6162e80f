"""`model.generate(...)` for a decode or a text generation: the settings the learner chose, named as
transformers names them, only where they differ from the library's defaults (GenerationConfig's).

The app builds the same search from explicit logits processors (so that it can record each step's
candidates); `generate`'s own keyword arguments put the same processors in the same order (penalties,
then temperature, top-k, top-p), so a greedy run and a seeded sample give the same tokens.
"""

from __future__ import annotations

from backend.snippets.checkpoint import loading
from backend.snippets.text import call, differing, literal, script

# transformers' GenerationConfig defaults, for the keyword arguments the app's knobs map to
LIBRARY_DEFAULTS = {"do_sample": False, "num_beams": 1, "temperature": 1.0, "top_k": 50, "top_p": 1.0,
                    "length_penalty": 1.0, "no_repeat_ngram_size": 0, "early_stopping": False,
                    "num_return_sequences": 1, "repetition_penalty": 1.0, "min_new_tokens": 0}


def generate_kwargs(settings: dict) -> dict:
    """The app's decode settings -> model.generate keyword arguments that differ from the defaults."""
    s = settings or {}
    strategy = s.get("strategy", "greedy")
    kw: dict = {"max_new_tokens": int(s.get("max_new_tokens", 64))}
    if strategy == "sample":
        kw.update(do_sample=True, temperature=float(s.get("temperature", 1.0)), top_k=int(s.get("top_k") or 0),
                  top_p=float(s.get("top_p", 1.0)))
    if strategy == "beam":
        kw.update(num_beams=int(s.get("num_beams", 1)), length_penalty=float(s.get("length_penalty", 1.0)),
                  early_stopping=bool(s.get("early_stopping", False)))
    kw.update(num_return_sequences=int(s.get("num_return_sequences", 1) or 1),
              repetition_penalty=float(s.get("repetition_penalty", 1.0)),
              no_repeat_ngram_size=int(s.get("no_repeat_ngram_size", 0) or 0),
              min_new_tokens=int(s.get("min_new_tokens", 0) or 0))
    return differing(kw, LIBRARY_DEFAULTS)


def prompt_lines(prompt: str, chat: bool) -> list[str]:
    """`inputs`: the prompt as the app feeds it (as one user turn of the chat template when asked)."""
    if chat:
        return [f"prompt = {literal(prompt)}",
                'text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False, '
                "add_generation_prompt=True)",
                'inputs = tokenizer(text, add_special_tokens=False, return_tensors="pt")']
    return [f"prompt = {literal(prompt)}", 'inputs = tokenizer(prompt, return_tensors="pt")']


def snippet(prompt: str, settings: dict, model: dict, app_adds: str = "") -> str:
    """A runnable script: load the checkpoint, generate as the run did, print the new text."""
    s = settings or {}
    load = loading(model, "AutoModelForCausalLM")
    kw = generate_kwargs(s)
    seed = s.get("seed")
    run = prompt_lines(prompt, bool(s.get("chat_template")))
    imports = list(load.imports)
    if s.get("strategy") == "sample" and seed is not None:
        imports.insert(0, "import torch")
        run.append(f"torch.manual_seed({int(seed)})  # the run's seed: the same draws, the same tokens")
    run += [f"out = {call('model.generate', ['**inputs'], kw)}",
            "prompt_len = inputs.input_ids.shape[1]",
            "for row in out:",
            "    print(repr(tokenizer.decode(row[prompt_len:], skip_special_tokens=True)))"]
    notes = [f"# What the app adds: {app_adds}"] if app_adds else []
    return script(imports, load.lines, run, notes)
