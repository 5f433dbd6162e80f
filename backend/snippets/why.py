"""The Why tab's snippet (`/attribute`): the explained quantity written as a forward function, then Captum's
LayerIntegratedGradients (the run's steps and baseline: [PAD] at every scored token, special tokens kept),
LayerGradientXActivation and FeatureAblation (occlusion: a token removed from the sequence), each summed to one
score per token. Written for the sentiment classifier (the one trained here or a checkpoint's head), the decoder's
next token, zero-shot by embedding similarity (softmax of cosine / T to the label descriptions), a token's NER tag
(the offline model trained here: encoder, word shapes and head; or a checkpoint's token classifier) and a QA
reader's span (start + end logit, question and context read as a pair), chapter 4's multilingual NER runs (the
packaged encoder with the run's top layers and head, as the Multilingual tab's snippet loads them) and a classifier
trained in the session (from the Train tab's Download, unzipped beside the snippet: fine-tuned or the probe). Where
the forward reads more than the ids (the span's or the tagged token's place, segment ids, word shapes), those are
per-token rows that move with the tokens when one is removed."""

from __future__ import annotations

from pathlib import Path

from backend.engines.embedding.vectors import DEFAULT_MAX_LENGTH as EMBED_MAX_LENGTH  # how the app embeds
from backend.engines.classify.similarity import DEFAULT_TEMPERATURE  # where a run does not say its own
from backend.hub import multilingual_runs
from backend.runtime.config import METHOD_EMBEDDING, METHOD_FINETUNED
from backend.snippets import local_heads, multilingual
from backend.snippets.checkpoint import in_cache, loading
from backend.snippets.pipelines import finetuned_loading, trained_sentiment_folder
from backend.snippets.text import literal, script
from backend.snippets.word_shapes import WORD_SHAPE

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


def _session(result: dict) -> tuple[list[str], list[str], list[str]]:
    """A classifier trained in the session (Train tab), from its Download: fine-tuned (the encoder's new weights
    and the linear head on its mean-pooled states) or feature extraction (the frozen encoder, mean-pooled and
    L2-normalised, standardised, through the logistic regression); the probability of the run's label."""
    model, label = result.get("model") or {}, (result.get("prediction") or {}).get("label", "")
    method = model.get("trained_method", "finetune")
    folder = model.get("download") or f"classifier-{method}"
    imports = ["import json", "from pathlib import Path", "import torch", "from safetensors.torch import load_file",
               "from transformers import AutoModel, AutoTokenizer"]
    load = [f"# your {model.get('classifier', method)} classifier over {model.get('base_checkpoint', '?')}, trained on "
            f"{model.get('trained_on', '?')} in the Train tab",
            f"folder = Path({folder!r})  # the Train tab's Download, unzipped here",
            "tokenizer = AutoTokenizer.from_pretrained(folder)",
            "encoder = AutoModel.from_pretrained(folder).eval()",
            'labels = json.loads((folder / "labels.json").read_text())', "model = encoder",
            f"LABEL = labels.index({label!r})"]
    pool = ["    hidden = encoder(input_ids=ids, attention_mask=mask).last_hidden_state.float()",
            "    m = mask.unsqueeze(-1).to(hidden.dtype)",
            "    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)"]
    if method == "probe":
        return imports, load + ['probe = load_file(str(folder / "probe.safetensors"))  # mean, scale, weight, bias'], [
            f"def forward(ids, mask):  # the probability of {label}: the standardised sentence vector through the probe",
            *pool, "    x = torch.nn.functional.normalize(pooled, p=2, dim=1)",
            '    return torch.softmax(((x - probe["mean"]) / probe["scale"]) @ probe["weight"] + probe["bias"], '
            "dim=-1)[:, LABEL]"]
    return imports, load + ['head = load_file(str(folder / "head.safetensors"))  # the linear head: weight, bias'], [
        f"def forward(ids, mask):  # the probability of {label}: the mean-pooled states through the head",
        *pool, '    return torch.softmax(pooled @ head["weight"].T + head["bias"], dim=-1)[:, LABEL]']


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


def _cached_loading(folder: Path, what: list[str]) -> tuple[list[str], list[str]]:
    """(imports, lines) that define `tokenizer`, `encoder` and `head`/`labels` of a folder in the app's cache."""
    return (["import json", "import os", "from pathlib import Path", "import torch",
             "from safetensors.torch import load_file", "from transformers import AutoModel, AutoTokenizer"],
            [*what, f"folder = {in_cache(folder)}", "tokenizer = AutoTokenizer.from_pretrained(folder)",
             "encoder = AutoModel.from_pretrained(folder).eval()",
             'head = load_file(str(folder / "head.safetensors"))',
             'labels = json.loads((folder / "labels.json").read_text())', "model = encoder"])


def _similarity(result: dict) -> tuple[list[str], list[str], list[str]]:
    """Zero-shot by embedding similarity: softmax over the labels of cosine(text, description) / T."""
    p = result.get("prediction") or {}
    described, label = p.get("descriptions") or {}, p.get("label", "")
    load = loading(result.get("model") or {}, "AutoModel", what="encoder")
    return ["import torch", *load.imports], load.lines + [
        "model = encoder",
        f"labels = {literal(list(described))}",
        f"descriptions = {literal(list(described.values()))}  # each label as the app describes it",
        f"LABEL, T = labels.index({label!r}), {float(p.get('temperature', DEFAULT_TEMPERATURE))!r}",
        "",
        "def embed(ids, mask):  # the mean of the last hidden states, L2-normalised",
        "    hidden = encoder(input_ids=ids, attention_mask=mask).last_hidden_state.float()",
        "    m = mask.unsqueeze(-1).to(hidden.dtype)",
        "    return torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9), p=2, dim=1)",
        "",
        "with torch.no_grad():  # the descriptions' vectors are held fixed: they are not the input explained",
        f'    enc = tokenizer(descriptions, padding=True, truncation=True, max_length={EMBED_MAX_LENGTH}, '
        'return_tensors="pt")',
        "    vectors = embed(enc.input_ids, enc.attention_mask)"], [
        f"def forward(ids, mask):  # the score of {label!r}: softmax over the labels of cosine / T",
        "    return (embed(ids, mask) @ vectors.T / T).softmax(-1)[:, LABEL]"]


def _ner(result: dict) -> tuple[list[str], list[str], list[str], list[str], list[str]] | None:
    """(imports, loading, forward, encoding, extras) for a token classifier's probability of one token's tag:
    the offline model trained here (encoder, word shapes, a head per token; a word's later pieces take its first
    piece's tags) or a checkpoint's AutoModelForTokenClassification. None for another model."""
    model, p = result.get("model") or {}, result.get("prediction") or {}
    label, labels, focus = p.get("label", ""), list(p.get("labels") or []), p.get("focus") or {}
    at = int(focus.get("index", 0))
    what = f"the probability that {focus.get('token', '')!r} is {label}"
    marks = ["at = torch.zeros_like(ids)",
             "at[0, FOCUS] = 1  # where the tag is read: it moves with the tokens when one is removed",
             "special = torch.tensor([[t in tokenizer.all_special_ids for t in ids[0].tolist()]])",
             "special[0, FOCUS] = True  # the tagged token is kept as it is (what is explained is its tag)"]
    read = "    rows, f = torch.arange(len(ids)), at.argmax(-1)"
    tail = ["    return probs[:, LABEL]"]
    other = f"{'IB'[label[:1] == 'I']}-{label[2:]}"  # B-X's I-X, I-X's B-X
    if label[:2] in ("B-", "I-") and other in labels:  # a word's later piece: its word's B-X is read as I-X
        tail = ["    later = bool(PIECE[ids[0, f[0]]])  # a word's later piece: its word's B- tag counts as I-",
                f"    return probs[:, LABEL] + (probs[:, labels.index({other!r})] if later else 0)"
                if label[0] == "I" else "    return probs[:, LABEL] * (0.0 if later else 1.0)"]
    encoding = ['enc = tokenizer(text, return_tensors="pt")', "ids, mask = enc.input_ids, enc.attention_mask", *marks]
    if model.get("run") in multilingual_runs.RUN_NAMES and "fine_tuned" in model:  # chapter 4's run
        run = str(model["run"])
        load = loading(model, "AutoModel", what="encoder")
        return [*multilingual.IMPORTS, *load.imports], load.lines + [
            *multilingual.run_lines(run, multilingual_runs.RUN_NAMES[run]), "model = encoder",
            f"LABEL, FOCUS = labels.index({label!r}), {at}  # {focus.get('token', '')!r}",
            "# a piece that continues its word: no \u2581 (SentencePiece's word start) and not a special token",
            "SPECIAL = set(tokenizer.all_special_ids)",
            "PIECE = torch.tensor([isinstance(p, str) and not p.startswith(\"\\u2581\") and i not in SPECIAL",
            "                      for i, p in enumerate(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer)))))])"], [
            f"def forward(ids, mask, at):  # {what}",
            "    logits = head(encoder(input_ids=ids, attention_mask=mask).last_hidden_state).float()",
            "    first = torch.where(PIECE[ids], 0, torch.arange(ids.shape[1])).cummax(1).values  # each word's first piece",
            read,
            "    probs = logits[rows, first[rows, f]].softmax(-1)  # a word is tagged at its first piece", *tail], \
            encoding, ["at"]
    folder = local_heads.trained_folder(model, "ner")
    if folder is None:
        if model.get("method", "model") != "model":
            return None
        load = loading(model, "AutoModelForTokenClassification")
        return ["import torch", *load.imports], load.lines + [
            f"LABEL, FOCUS = model.config.label2id[{label!r}], {at}  # {focus.get('token', '')!r}"], [
            f"def forward(ids, mask, at):  # {what}",
            "    logits = model(input_ids=ids, attention_mask=mask).logits.float()", read,
            "    return logits[rows, f].softmax(-1)[:, LABEL]"], encoding, ["at"]
    imports, load = _cached_loading(folder, [
        "# all-MiniLM-L6-v2 fine-tuned once by this app on its shipped NER set, in the app's cache: the encoder,",
        "# a word-shape embedding added to its input and joined to its states, a linear head per token, the tags"])
    return imports, load + [
        f"LABEL, FOCUS = labels.index({label!r}), {at}  # {focus.get('token', '')!r}",
        'PIECE = torch.tensor([p.startswith("##") for p in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))])',
        "", *WORD_SHAPE], [
        f"def forward(ids, mask, shapes, at):  # {what}",
        "    embeds = encoder.get_input_embeddings()(ids)",
        '    if "shape_in.weight" in head:  # each word\'s shape added to its tokens\' input',
        '        embeds = embeds + head["shape_in.weight"][shapes]',
        "    hidden = encoder(inputs_embeds=embeds, attention_mask=mask).last_hidden_state",
        '    if "shapes.weight" in head:  # and joined to their last states',
        '        hidden = torch.cat([hidden, head["shapes.weight"][shapes]], dim=-1)',
        '    logits = (hidden @ head["head.weight"].T + head["head.bias"]).float()',
        "    first = torch.where(PIECE[ids], 0, torch.arange(ids.shape[1])).cummax(1).values  # each word's first piece",
        read,
        "    probs = logits[rows, first[rows, f]].softmax(-1)  # a word is tagged at its first piece", *tail], [
        'enc = tokenizer(text, return_offsets_mapping=True, return_tensors="pt")',
        "ids, mask = enc.input_ids, enc.attention_mask",
        "words = {}  # each word's characters, from its pieces' offsets: its shape is read from the text as typed",
        "for w, (s, e) in zip(enc.word_ids(), enc.offset_mapping[0].tolist()):",
        "    if w is not None:",
        "        words[w] = (min(s, words.get(w, (s, e))[0]), max(e, words.get(w, (s, e))[1]))",
        "shapes = torch.tensor([[0 if w is None else word_shape(text[slice(*words[w])]) for w in enc.word_ids()]])",
        *marks], ["shapes", "at"]


def _qa(result: dict, inputs: dict) -> tuple[list[str], list[str], list[str], list[str], list[str]] | None:
    """(imports, loading, forward, encoding, extras) for a reader's span: its first token's start logit plus its
    last token's end logit, question and context read as one pair; the span's own tokens are not scored."""
    model, p = result.get("model") or {}, result.get("prediction") or {}
    span = p.get("span") or {}
    first, last = (list(span.get("tokens") or [0, 0]) + [0, 0])[:2]
    folder = local_heads.trained_folder(model, "qa")
    if folder is not None:
        imports = ["from pathlib import Path", "import os", "import torch",
                   "from transformers import AutoModelForQuestionAnswering, AutoTokenizer"]
        load = ["# all-MiniLM-L6-v2 with a span head, fine-tuned once by this app on its shipped QA set (SQuAD 2.0",
                "# style), in the app's cache", f"folder = {in_cache(folder)}",
                "tokenizer = AutoTokenizer.from_pretrained(folder)",
                "model = AutoModelForQuestionAnswering.from_pretrained(folder).eval()"]
    elif model.get("method", "model") == "model":
        found = loading(model, "AutoModelForQuestionAnswering")
        imports, load = ["import torch", *found.imports], found.lines
    else:
        return None
    texts = p.get("texts") or {}
    question = inputs.get("question") or texts.get("question", "")
    context = inputs.get("text") or result.get("text") or texts.get("context", "")  # /attribute's text: the context
    return imports, load + [
        f"FIRST, WIDTH = {int(first)}, {int(last) - int(first)}  # the span {span.get('answer', '')!r}: its first "
        "token, its last one WIDTH on"], [
        f"def forward(ids, mask, types, at):  # start + end logit of the span {span.get('answer', '')!r}",
        '    out = model(input_ids=ids, attention_mask=mask, **({"token_type_ids": types} if SEGMENTS else {}))',
        "    rows, f = torch.arange(len(ids)), at.argmax(-1)",
        "    return out.start_logits.float()[rows, f] + out.end_logits.float()[rows, f + WIDTH]"], [
        f"question = {literal(question)}", f"context = {literal(context)}",
        'enc = tokenizer(question, context, return_tensors="pt")',
        "ids, mask = enc.input_ids, enc.attention_mask",
        'SEGMENTS = "token_type_ids" in enc  # BERT\'s segment ids (0 question, 1 context) move with their tokens',
        'types = enc.get("token_type_ids", torch.zeros_like(ids))',
        "at = torch.zeros_like(ids)",
        "at[0, FIRST] = 1  # the span's first token: it moves with the tokens when one is removed",
        "parts = enc.sequence_ids(0)  # None for [CLS] and [SEP]",
        "special = torch.tensor([[t in tokenizer.all_special_ids or parts[i] is None for i, t in enumerate(ids[0].tolist())]])",
        "special[0, FIRST:FIRST + WIDTH + 1] = True  # the span's own tokens are kept: removing one removes the answer"
    ], ["types", "at"]


def _methods(result: dict, encoding: list[str] | None = None, extras: list[str] | None = None) -> list[str]:
    """Captum's calls over `forward(ids, mask, *extras)`; `encoding`: the lines that define ids, mask, special
    and the extras (default: the text alone), each extra a (1, tokens) row that moves with its token."""
    methods = result.get("methods") or []
    completeness = (result.get("checks") or {}).get("completeness") or {}
    steps = int(completeness.get("steps") or (result.get("settings") or {})["steps"])  # the run's own
    batch = completeness.get("internal_batch_size")  # the run's, where it says (else Captum's: all steps at once)
    extras = list(extras or [])
    args = f"({', '.join(['mask', *extras])}{',' if not extras else ''})"
    lines = list(encoding or ['enc = tokenizer(text, return_tensors="pt")',
                              "ids, mask = enc.input_ids, enc.attention_mask",
                              "special = torch.tensor([[t in tokenizer.all_special_ids for t in ids[0].tolist()]])"])
    lines += ["base_id = next(i for i in (tokenizer.pad_token_id, tokenizer.mask_token_id, tokenizer.unk_token_id,",
              "                           tokenizer.eos_token_id) if i is not None)",
              "baseline = ids.masked_fill(~special, base_id)  # [PAD] at every scored token, special tokens kept",
              "scored = (~special[0]).nonzero().flatten()  # the positions that get a score",
              "embeddings = model.get_input_embeddings()"]
    if "integrated_gradients" in methods:
        lines += ["lig = LayerIntegratedGradients(forward, embeddings)",
                  f"attributions, delta = lig.attribute(ids, baselines=baseline, additional_forward_args={args}, "
                  f"n_steps={steps}, {f'internal_batch_size={int(batch)}, ' if batch else ''}"
                  "return_convergence_delta=True)",
                  "integrated_gradients = attributions.sum(-1)[0, scored].detach()  # one score per token"]
    if "gradient_x_input" in methods:
        lines += [f"gxi = LayerGradientXActivation(forward, embeddings).attribute(ids, additional_forward_args={args})",
                  "gradient_x_input = gxi.sum(-1)[0, scored].detach()"]
    if "occlusion" in methods:
        lines += ["",
                  "def without(keep):  # keep: (1, tokens) 1 = kept, 0 = removed from the sequence (the rest close up)",
                  "    drop = set(scored[keep[0] < 0.5].tolist())",
                  *(["    row = torch.tensor([[t for i, t in enumerate(ids[0].tolist()) if i not in drop]])",
                     "    with torch.no_grad():",
                     "        return forward(row, torch.ones_like(row)).double()"] if not extras else [
                      "    kept = [i for i in range(ids.shape[1]) if i not in drop]  # "
                      f"{', '.join(extras)}: each token's own, kept with it",
                      "    with torch.no_grad():",
                      "        return forward(ids[:, kept], torch.ones_like(ids[:, kept]), "
                      + ", ".join(f"{e}[:, kept]" for e in extras) + ").double()"]),
                  "",
                  "occlusion = FeatureAblation(without).attribute(torch.ones(1, len(scored)), baselines=0.0,",
                  "                                               feature_mask=torch.arange(len(scored))[None])[0]"]
    names = [m for m in ("integrated_gradients", "gradient_x_input", "occlusion") if m in methods]
    if names:
        # one text: each token as the text has it (its characters, by its offsets), as the page shows it
        shown = ("text[slice(*spans[p])]" if encoding is None else "tokenizer.convert_ids_to_tokens(int(ids[0, p]))")
        if encoding is None:
            lines += ['spans = tokenizer(text, return_offsets_mapping=True)["offset_mapping"]']
        lines += ["for i, p in enumerate(scored.tolist()):",
                  f"    print({shown}, " + ", ".join(f"round(float({n}[i]), 4)" for n in names) + ")"]
    return lines


def attribute(inputs: dict, result: dict) -> str:
    task = result.get("task") or inputs.get("task") or "sentiment"
    adds = ("# What the app adds: attention rollout beside these, the deletion test (which ranking removes the "
            "quantity fastest, against random orders), the methods' agreement, and IG's steps raised while its "
            "completeness gap is over 5%.")
    text = [f"text = {literal(result.get('text') or inputs.get('text', ''))}"]
    method = (result.get("model") or {}).get("method")
    written = None
    if task == "next_token":
        written = (*_next_token(result), None, None)
    elif (task in ("sentiment", "zero_shot") and method == METHOD_EMBEDDING
          and "cosines" in (result.get("prediction") or {})):  # similarity to label descriptions
        written = (*_similarity(result), None, None)
    elif task == "sentiment":
        written = (*_sentiment(result), None, None)
    elif task == "session":
        written = (*_session(result), None, None)
    elif task == "ner":
        written = _ner(result)
    elif task == "qa":
        written = _qa(result, inputs)
        text = []
    if written is None:
        model = loading(result.get("model") or {}, "AutoModel")
        note = (f"# This run explained {result.get('quantity', task)!r} ({task}): the app's forward for that model "
                "(backend/why/tasks.py) is not written out here; with a forward(ids, mask) returning it, the "
                "Captum calls are those of a sentiment run.")
        return script(["import torch", CAPTUM, *model.imports], model.lines, [note])
    imports, load, forward, encoding, extras = written
    return script([*imports, CAPTUM], load, forward, text + _methods(result, encoding, extras), [adds])
