"""The Pipelines' /ner and /qa snippets for a local run served by a model this app trained: the run
itself, in transformers and torch, from the model's folder in the app's cache.

/ner: all-MiniLM-L6-v2 fine-tuned here with a token head and word shapes (backend/engines/ner/serving.py). The
snippet gives transformers' token-classification pipeline the same two things the app gives it: a model whose
forward adds each word's shape to its pieces' input and joins it to their states, and gives a word's later (##)
pieces its first piece's tags with B-X counted as I-X; and each piece's word shape, read from the text as typed
(the uncased tokenizer lowercases it). The pipeline's own aggregation ("simple", "first", ...) does the rest.

/qa: the reader trained here (backend/engines/qa/reader.py): a span head; in each window the n-best starts x
n-best ends over context tokens (at most 30 tokens), a span scored start + end logit; the [CLS] pair is "no
answer" and wins when the best span beats it by no more than the threshold chosen on validation (saved in the
model's config); score = softmax over the n-best spans and [CLS].
"""

from __future__ import annotations

from pathlib import Path

from backend.engines.qa.reader import MAX_ANSWER_TOKENS, MAX_LENGTH, N_BEST, STRIDE  # what /qa serves with
from backend.engines.tasks.text import MAX_WINDOW_STRIDE, WINDOW_STRIDE_SHARE  # how /ner reads a long text
from backend.hub import builders
from backend.hub.policy import package_dir
from backend.runtime.config import METHOD_FINETUNED
from backend.snippets.checkpoint import in_cache, packaged_spec
from backend.snippets.text import literal, script
from backend.snippets.word_shapes import WORD_SHAPE



# The model the pipeline calls (the app's serving.ForTokenClassification) and the pipeline that hands it each
# piece's word shape (the app's serving.with_word_shapes): fixed lines, the same for every run
TAGGER = [
    "class Tagger(torch.nn.Module):  # what the pipeline calls: model(**inputs)[\"logits\"], config.id2label",
    "    def __init__(self):",
    "        super().__init__()",
    "        self.encoder = encoder",
    "        self.config = AutoConfig.from_pretrained(folder, id2label=dict(enumerate(labels)),",
    "                                                 label2id={l: i for i, l in enumerate(labels)})",
    "",
    "    device = property(lambda self: self.encoder.device)",
    "    dtype = property(lambda self: self.encoder.dtype)",
    "",
    "    def forward(self, input_ids, attention_mask, token_type_ids=None, shape_ids=None):",
    "        embeds = encoder.get_input_embeddings()(input_ids)",
    '        if "shape_in.weight" in head:  # each word\'s shape added to its pieces\' input',
    '            embeds = embeds + head["shape_in.weight"][shape_ids]',
    "        hidden = encoder(inputs_embeds=embeds, attention_mask=attention_mask,",
    "                         token_type_ids=token_type_ids).last_hidden_state",
    '        if "shapes.weight" in head:  # and joined to their last states',
    '            hidden = torch.cat([hidden, head["shapes.weight"][shape_ids]], dim=-1)',
    '        logits = (hidden @ head["head.weight"].T + head["head.bias"]).float()',
    "        # trained on each word's first piece: a later (##) piece takes its word's first piece's tags,",
    "        # with p(I-X) := p(B-X) + p(I-X) and p(B-X) := 0, so the pipeline sees one entity per word",
    "        later = PIECE[input_ids]",
    "        first = torch.where(later, 0, torch.arange(input_ids.shape[1])).cummax(1).values",
    "        logp = logits.gather(1, first.unsqueeze(-1).expand_as(logits)).log_softmax(-1)",
    "        moved = logp.clone()",
    "        for b, i in B_TO_I:",
    "            moved[..., i] = torch.logaddexp(logp[..., b], logp[..., i])",
    "            moved[..., b] = -1e4",
    '        return {"logits": torch.where(later.unsqueeze(-1), moved, logits)}',
    "",
    "",
    "def piece_shapes(text, ids, offsets, special):",
    '    """Each piece\'s word shape (0 for [CLS], [SEP]): a word is a piece and the ## pieces after it, read',
    '    from the text as typed (the uncased tokenizer lowercases it)."""',
    "    words = []",
    "    for t, (s, e), sp in zip(ids, offsets, special):",
    "        if sp:",
    "            words.append(None)",
    "        elif PIECE[t] and words and words[-1] is not None:  # the same word: its span grows",
    "            words[-1][1] = max(words[-1][1], e)",
    "            words.append(words[-1])",
    "        else:",
    "            words.append([s, e])",
    "    return [0 if w is None else word_shape(text[w[0]:w[1]]) for w in words]",
    "",
    "",
    "class WithShapes(TokenClassificationPipeline):  # each window's pieces go to the model with their shapes",
    "    def preprocess(self, sentence, offset_mapping=None, **params):",
    "        for chunk in super().preprocess(sentence, offset_mapping, **params):",
    '            ids, spans = chunk["input_ids"][0].tolist(), chunk["offset_mapping"][0].tolist()',
    '            chunk["shape_ids"] = torch.tensor([piece_shapes(sentence, ids, spans, chunk["special_tokens_mask"][0].tolist())])',
    "            yield chunk"]


def trained_folder(model: dict, role: str) -> Path | None:
    """The cache folder of the offline `role` model ("ner", "qa") trained here from the packaged encoder, found as
    the loader finds it; None for any other model (a checkpoint, chapter 4's multilingual runs, a fallback)."""
    spec = packaged_spec(model)
    root = package_dir(spec.module) if spec is not None and spec.module else None
    if (root is None or model.get("role") != role or model.get("method") != METHOD_FINETUNED
            or "fine_tuned" in model or role not in builders.BUILDERS):
        return None
    return builders.BUILDERS[role].cache_dir(root / spec.subdir if spec.subdir else root)


def ner(texts: list[str], aggregation: str, folder: Path) -> str:
    """The run of the NER model trained here through transformers' pipeline, with the app's aggregation."""
    imports = ["import json", "import logging", "import os", "from pathlib import Path", "import torch",
               "from safetensors.torch import load_file",
               "from transformers import AutoConfig, AutoModel, AutoTokenizer, TokenClassificationPipeline"]
    load = ["# all-MiniLM-L6-v2 fine-tuned once by this app on its shipped NER set, in the app's cache: the encoder,",
            "# a word-shape embedding added to its input and joined to its states, a linear head per token, the tags",
            f"folder = {in_cache(folder)}",
            "tokenizer = AutoTokenizer.from_pretrained(folder)",
            "encoder = AutoModel.from_pretrained(folder).eval()",
            'head = load_file(str(folder / "head.safetensors"))',
            'labels = json.loads((folder / "labels.json").read_text())',
            'PIECE = torch.tensor([p.startswith("##") for p in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))])',
            'B_TO_I = [(labels.index(l), labels.index("I-" + l[2:])) for l in labels if l[:2] == "B-" and "I-" + l[2:] in labels]',
            "", *WORD_SHAPE]
    run = [f"texts = {literal(list(texts))}",
           f"AGGREGATION = {aggregation!r}",
           "limit = min(tokenizer.model_max_length, encoder.config.max_position_embeddings)",
           "long = any(len(ids) > limit for ids in tokenizer(texts)[\"input_ids\"])",
           f"windows = {{\"stride\": min({MAX_WINDOW_STRIDE}, limit // {WINDOW_STRIDE_SHARE})}} if long and "
           "AGGREGATION != \"none\" else {}  # as the app reads a long text",
           'logging.getLogger("transformers.pipelines.base").setLevel(logging.CRITICAL)  # "not supported": it runs it all the same',
           "pipe = WithShapes(model=Tagger().eval(), tokenizer=tokenizer, aggregation_strategy=AGGREGATION, **windows)",
           "out = pipe(texts)",
           "for text, entities in zip(texts, out):",
           "    for e in entities:",
           '        print(repr(text[e["start"]:e["end"]]), e.get("entity_group", e.get("entity")), e["start"], e["end"], '
           'round(float(e["score"]), 4))']
    return script(imports, load, TAGGER, run)


def qa(question: str, context: str, top_n: int, set_aside: list[dict], folder: Path) -> str:
    """The reader trained here: its windows, start and end logits, n-best spans, [CLS] and threshold, scores.
    `set_aside`: the spans the app's answer-type check set aside in this run (that check is the app's own)."""
    imports = ["import os", "from pathlib import Path", "import torch",
               "from transformers import AutoModelForQuestionAnswering, AutoTokenizer"]
    load = ["# all-MiniLM-L6-v2 with a span head, fine-tuned once by this app on its shipped QA set (SQuAD 2.0",
            "# style), in the app's cache; the 'no answer' threshold was chosen on its validation split",
            f"folder = {in_cache(folder)}",
            "tokenizer = AutoTokenizer.from_pretrained(folder)",
            "model = AutoModelForQuestionAnswering.from_pretrained(folder).eval()",
            'THRESHOLD = getattr(model.config, "null_threshold", 0.0)',
            f"N_BEST, MAX_TOKENS, TOP_N = {N_BEST}, {MAX_ANSWER_TOKENS}, {int(top_n)}"]
    run = [f"question = {literal(question)}", f"context = {literal(context)}",
           f"limit = min({MAX_LENGTH}, tokenizer.model_max_length, model.config.max_position_embeddings)",
           'q_tokens = len(tokenizer(question, add_special_tokens=False)["input_ids"])',
           f"stride = max(0, min({STRIDE}, (limit - q_tokens - 4) // 2))  # overlapping windows for a long context",
           'enc = tokenizer(question, context, truncation="only_second", max_length=limit, stride=stride,',
           '                return_overflowing_tokens=True, return_offsets_mapping=True, padding=True, return_tensors="pt")',
           "with torch.inference_mode():",
           "    out = model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, token_type_ids=enc.token_type_ids)",
           "",
           "null, spans = float(\"inf\"), {}  # null: the [CLS] span's start + end logit ('no answer'), lowest over windows",
           "for w in range(len(enc.input_ids)):",
           "    s, e = out.start_logits[w].float(), out.end_logits[w].float()",
           "    null = min(null, float(s[0] + e[0]))",
           "    ctx = torch.tensor([t for t, part in enumerate(enc.sequence_ids(w)) if part == 1], dtype=torch.long)",
           "    if len(ctx) == 0:",
           "        continue",
           "    starts = ctx[torch.argsort(-s[ctx], stable=True)[:N_BEST]].tolist()  # the n-best starts x n-best ends",
           "    ends = ctx[torch.argsort(-e[ctx], stable=True)[:N_BEST]].tolist()",
           "    for a in starts:",
           "        for b in ends:",
           "            if a <= b < a + MAX_TOKENS:",
           "                c0, c1 = int(enc.offset_mapping[w][a][0]), int(enc.offset_mapping[w][b][1])",
           "                logit = float(s[a] + e[b])",
           "                if c1 > c0 and spans.get((c0, c1), -float(\"inf\")) < logit:  # a span in two windows: its best",
           "                    spans[(c0, c1)] = logit",
           "ranked = sorted(spans.items(), key=lambda kv: -kv[1])",
           "probs = torch.tensor([v for _, v in ranked] + [null], dtype=torch.float64).softmax(0)  # the spans and [CLS]",
           "scored = [{\"answer\": context[c0:c1], \"score\": float(p), \"start\": c0, \"end\": c1, \"logit\": round(v, 4)}",
           "          for ((c0, c1), v), p in zip(ranked, probs)]"]
    if set_aside:
        where = sorted({(int(a["start"]), int(a["end"])) for a in set_aside})
        run += ["# The app then sets aside a span that beats 'no answer' but is not the kind of thing asked (its",
                "# answer-type check, backend/engines/qa/answer_type.py, which the span head cannot make), with every",
                f"# span overlapping it. In this run it set aside: {', '.join(repr(a['answer']) for a in set_aside)}",
                f"SET_ASIDE = {where!r}",
                "answers, aside = [], []",
                "for a in scored:",
                '    if any(a["start"] < y and x < a["end"] for x, y in aside):',
                "        continue",
                '    if (a["start"], a["end"]) in SET_ASIDE:',
                '        aside.append((a["start"], a["end"]))',
                "    else:",
                "        answers.append(a)"]
    else:
        run += ["answers = scored"]
    run += ["best = answers[0][\"logit\"] if answers else -float(\"inf\")",
            "no_answer = not answers or best - null <= THRESHOLD  # [CLS] wins unless the best span beats it by more",
            "answer = None if no_answer else answers[0]",
            "answers = answers[:TOP_N]",
            "print(\"no answer\" if no_answer else repr(answer[\"answer\"]))",
            "for a in answers:",
            '    print(round(a["score"], 4), repr(a["answer"]), a["start"], a["end"])']
    return script(imports, load, run)
