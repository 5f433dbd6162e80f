"""The Pipelines tab's snippets for the runs the local profile serves with its decoder.

Summaries and translations ("instruct-fallback"): SmolLM2-135M-Instruct gets the app's task prompt through
its chat template and replies greedily with its repetition penalty (`engines.tasks.instruct.chat_generate`),
with the run's length and beam settings. Fill-mask ("decoder-fill-mask"): the whole words likeliest after the
left context, each put in place and the whole sentence scored (backend/pipelines/decoder_mask.py). The decoder
is the packaged GGUF, loaded as every snippet loads it (`checkpoint.loading`). Plain text out, nothing loaded.
"""

from __future__ import annotations

from backend.engines.tasks import instruct as ins
from backend.snippets.checkpoint import loading
from backend.snippets.text import call, literal, script

# The app's post-processing of a reply, in its words (engines.tasks.instruct.parse_free_text)
PARSE = "the reply is stripped and a leading 'Here is the summary:'-style preamble and quotes are dropped"


def _lengths(inputs: dict, result: dict) -> dict:
    """The endpoint's length and beam widgets as the app passed them on (the run's `settings`: the endpoint's
    defaults included; else the inputs): 0 minimum and 0 beams are left out."""
    ran = {**{k: v for k, v in inputs.items() if v not in (None, "")}, **(result.get("settings") or {})}
    kw = {"max_new_tokens": int(ran["max_new_tokens"])}
    min_new, beams = int(ran.get("min_new_tokens") or 0), int(ran.get("num_beams") or 0)
    if min_new:
        kw["min_new_tokens"] = min(min_new, kw["max_new_tokens"])
    if beams:
        kw["num_beams"] = beams
    return kw


def _served(result: dict) -> list[str]:
    """A note when the generation server wrote the reply: this script runs the same prompt and settings here."""
    engine = result.get("engine") or {}
    if engine.get("kind") in (None, "in-process"):
        return []
    return [f"# This reply was written by the generation server ({engine.get('kind')}); this script runs the same "
            "model, prompt and settings in transformers, whose float arithmetic may settle a near-tie otherwise."]


def reply(messages: list[dict], gen: dict, model: dict, app_adds: str, served: list[str] | None = None) -> str:
    """A runnable script: the decoder, the app's task prompt in its chat template, the reply as the app made it."""
    load = loading(model, "AutoModelForCausalLM")
    kw = {**gen, "do_sample": False, "repetition_penalty": ins.REPETITION_PENALTY}
    run = [f"messages = {literal(messages)}",
           "text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)",
           'inputs = tokenizer(text, add_special_tokens=False, return_tensors="pt")',
           "with torch.inference_mode():",
           f"    out = {call('model.generate', ['**inputs'], kw)}",
           "prompt_len = inputs.input_ids.shape[1]",
           "reply = tokenizer.decode(out[0, prompt_len:], skip_special_tokens=True).strip()",
           "print(reply)"]
    notes = [f"# What the app adds: {app_adds}", *(served or [])]
    return script(["import torch", *load.imports], load.lines, run, notes)


def summarize(inputs: dict, result: dict) -> str:
    text = result.get("text") or inputs.get("text", "")
    adds = (f"{PARSE}; it shows the first-three-sentences baseline, the summary checks and, given a reference, "
            "ROUGE-1/2/L of both.")
    return reply(ins.summary_messages(text), _lengths(inputs, result), result.get("model") or {}, adds,
                 _served(result))


def translate(inputs: dict, result: dict) -> str:
    source, _, target = str(result.get("language_pair") or "English -> German").partition(" -> ")
    messages = ins.translation_messages(inputs.get("text", ""), source, target)
    lengths = _lengths({**inputs, "min_new_tokens": 0}, {**result, "settings": {
        **(result.get("settings") or {}), "min_new_tokens": 0}})  # the endpoint has no minimum length
    return reply(messages, lengths, result.get("model") or {}, f"{PARSE}; given a reference, BLEU.",
                 _served(result))


def fill_mask(inputs: dict, result: dict) -> str:
    """The decoder's fill-mask: `candidates` (the top-k words, best first) with the app's scores."""
    load = loading(result.get("model") or {}, "AutoModelForCausalLM")
    top_k = int(inputs.get("top_k") or len(result.get("candidates") or []))  # the run's: it lists top_k words
    n = int(result.get("n_reranked") or top_k)
    run = [f"text = {literal(result.get('text') or inputs.get('text', ''))}",
           f"top_k, n = {top_k}, {n}  # n: the whole words the run reranked (the app's pool, or top_k if more)",
           'mask = "[MASK]" if "[MASK]" in text else "<mask>"',
           "left, right = text.split(mask)",
           "spaced = left[-1:].isspace()  # after a space the word is a ' word' token, else a bare one",
           "# the sentence starts at the tokenizer's start tokens, else at <|endoftext|> (a document boundary)",
           'start = tokenizer("")["input_ids"] or [tokenizer.convert_tokens_to_ids("<|endoftext|>")]',
           'left_ids = tokenizer(left.rstrip() if spaced else left, add_special_tokens=False)["input_ids"]',
           'right_ids = tokenizer(right, add_special_tokens=False)["input_ids"]',
           "",
           "# the candidates may be whole-word tokens only",
           "words = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])",
           "special = set(tokenizer.all_special_ids)",
           "allowed = torch.tensor([i not in special and ((len(w) > 1 and w[0] == ' ' and w[1:].isalnum()) if spaced",
           "                                              else w.isalnum()) for i, w in enumerate(words)])",
           "with torch.inference_mode():",
           "    # 1. one forward of the left context: its log-likelihood and the next word's log-probs",
           "    prefix = torch.tensor([start + left_ids])",
           "    logp = model(input_ids=prefix).logits[0].float().log_softmax(-1)",
           "    context_lp = float(logp[:-1].gather(-1, prefix[0, 1:, None]).sum())",
           "    vocab = min(len(allowed), logp.shape[-1])",
           "    next_logp = logp[-1, :vocab].masked_fill(~allowed[:vocab], -float('inf'))",
           "    left_lp, cand = torch.topk(next_logp, n)",
           "    # 2. each candidate in place: the log-probs of the candidate and of every token after it",
           "    keep = 1 + len(right_ids)",
           "    rows = torch.tensor([start + left_ids + [c] + right_ids for c in cand.tolist()])",
           "    logits = model(input_ids=rows, logits_to_keep=keep + 1).logits[:, -(keep + 1):-1].float()",
           "    tail = logits.log_softmax(-1).gather(-1, rows[:, -keep:, None]).squeeze(-1)",
           "sentence = context_lp + tail.sum(-1)  # the whole sentence's log-likelihood",
           "score = sentence.softmax(-1)  # shared among the reranked candidates",
           "order = torch.argsort(sentence, descending=True, stable=True).tolist()[:top_k]",
           "candidates = [{'token_str': words[int(cand[i])].strip(), 'score': float(score[i]),",
           "               'sentence_logprob': float(sentence[i]), 'left_logprob': float(left_lp[i]), 'left_rank': i + 1}",
           "              for i in order]",
           "for c in candidates:  # each word, its share of the score and its sentence's log-likelihood",
           "    print(c['token_str'], round(c['score'], 4), round(c['sentence_logprob'], 4))"]
    notes = ["# What the app adds: the sequence (left + word + right) and the notices; a long right context is "
             "scored in chunks (the same sums)."]
    return script(["import torch", *load.imports], load.lines, run, notes)
