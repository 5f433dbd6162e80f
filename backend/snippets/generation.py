"""`model.generate(...)` for a decode or a text generation: the settings the learner chose, named as
transformers names them, only where they differ from the library's defaults (GenerationConfig's).

The app builds the same search from explicit logits processors (so that it can record each step's
candidates); `generate`'s own keyword arguments put the same processors in the same order (penalties,
then temperature, top-k, top-p), so a greedy run and a seeded sample give the same tokens.
"""

from __future__ import annotations

from dataclasses import fields

from transformers import GenerationConfig

from backend.engines.generation.settings import DecodeSettings
from backend.snippets.checkpoint import loading
from backend.snippets.text import call, differing, literal, script

# what `generate` fills an unset keyword argument with: transformers' own table (pinned in requirements.txt)
LIBRARY_DEFAULTS = GenerationConfig._get_default_generation_params()
# what /decode takes for a setting a run's JSON leaves out (DecodeSettings' own defaults)
APP_DEFAULTS = {f.name: f.default for f in fields(DecodeSettings)}


def generate_kwargs(settings: dict) -> dict:
    """The app's decode settings -> model.generate keyword arguments that differ from the library's defaults."""
    s = {**APP_DEFAULTS, **{k: v for k, v in (settings or {}).items() if v is not None}}
    kw: dict = {"max_new_tokens": int(s["max_new_tokens"])}
    if s["strategy"] == "sample":
        kw.update(do_sample=True, temperature=float(s["temperature"]), top_k=int(s["top_k"] or 0),
                  top_p=float(s["top_p"]))
    if s["strategy"] == "beam":
        kw.update(num_beams=int(s["num_beams"]), length_penalty=float(s["length_penalty"]),
                  early_stopping=bool(s["early_stopping"]))
    kw.update(num_return_sequences=int(s["num_return_sequences"] or 1),
              repetition_penalty=float(s["repetition_penalty"]),
              no_repeat_ngram_size=int(s["no_repeat_ngram_size"] or 0))
    if int(s["min_new_tokens"] or 0) > 0:  # 0: no minimum, which is generate's own when the argument is left out
        kw["min_new_tokens"] = int(s["min_new_tokens"])
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
