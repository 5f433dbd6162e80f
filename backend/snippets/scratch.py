"""The From scratch tab's tokenizer snippet (`/train_tokenizer`, chapter 10): the `tokenizers` library's own
trainer (BPE, WordPiece or Unigram) on the run's text, with the app's setup (no normalizer, the Whitespace
pre-tokenizer, one special token `[UNK]`, one document per line) and the run's vocabulary size, then the first
merges (or Unigram's most probable pieces) and the run's sentence split by the trained tokenizer."""

from __future__ import annotations

from backend.engines.scratch import run_settings, seq2seq, tiny_gpt
from backend.engines.scratch.run_settings import SHOWN_MERGES  # the first merges the tab's table shows
from backend.runtime.config import GLOSSARY_FILE
from backend.snippets.text import file_name, literal, script

SCRATCH_TEXT = "assets/data/scratch/tokenizers.txt"  # the shipped essay, in the app's repository
SENTENCES = "assets/data/{kind}/{split}.jsonl"
MAX_LITERAL = 2000  # a longer paste is read from a file of the learner's own
MODELS = {"BPE": ("models.BPE(unk_token=UNK)", "trainers.BpeTrainer"),
          "WordPiece": ("models.WordPiece(unk_token=UNK)", "trainers.WordPieceTrainer"),
          "Unigram": ("models.Unigram()", "trainers.UnigramTrainer")}
FROM_CHECKOUT = "# the app's shipped corpus ({what} in its repository: run from a checkout)"


def corpus_lines(inputs: dict, result: dict) -> tuple[list[str], list[str]]:
    """(imports, lines that define `text`): the corpus the run trained on, one document per line."""
    corpus = str(inputs.get("corpus") or "tokenizers").strip().lower()
    if corpus == "paste":
        pasted = str(inputs.get("text") or "")
        if len(pasted) <= MAX_LITERAL:
            return [], [f"text = {literal(pasted)}  # the pasted text"]
        return [], [f"text = open('pasted.txt', encoding='utf-8').read()  # the text you pasted "
                    f"({len(pasted):,} characters), saved as pasted.txt"]
    if corpus == "upload":
        name = file_name(inputs.get("upload") or "corpus.txt")
        return [], [f"text = open({name!r}, encoding='utf-8-sig').read()  # the file you uploaded"]
    if corpus == "glossary":
        return ["import json"], [
            FROM_CHECKOUT.format(what=GLOSSARY_FILE),
            f"text = \"\\n\".join(json.loads(line)[\"text\"] for line in open({GLOSSARY_FILE!r}, encoding=\"utf-8\") "
            "if line.strip())"]
    if corpus == "sentences":
        return ["import json"], [
            FROM_CHECKOUT.format(what="assets/data/{emotion,sentiment,ner}/*.jsonl"),
            "lines = []",
            'for kind, field in (("emotion", "text"), ("sentiment", "text"), ("ner", "tokens")):',
            '    for split in ("train", "validation", "test"):',
            f"        for line in open({SENTENCES!r}.format(kind=kind, split=split), encoding=\"utf-8\"):",
            "            if line.strip():",
            "                value = json.loads(line)[field]",
            '                lines.append(" ".join(value) if isinstance(value, list) else str(value))',
            'text = "\\n".join(lines)']
    return [], [FROM_CHECKOUT.format(what=SCRATCH_TEXT), f"text = open({SCRATCH_TEXT!r}, encoding=\"utf-8\").read()"]


def train_tokenizer(inputs: dict, result: dict) -> str:
    algorithm = str(result.get("algorithm") or inputs.get("algorithm") or "BPE")
    model, trainer = MODELS.get(algorithm, MODELS["BPE"])
    size = int((result.get("vocab_size") or {}).get("asked") or float(inputs["vocab_size"]))  # the run's
    unk = ", unk_token=UNK" if algorithm == "Unigram" else ""  # Unigram's unknown piece is the trainer's setting
    imports, text = corpus_lines(inputs, result)
    sentence = (result.get("replay") or {}).get("sentence") or inputs.get("sentence") or ""
    train = [
        'UNK = "[UNK]"',
        f"tokenizer = Tokenizer({model})",
        "tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()  # no normalizer: the text as it is",
        f"trainer = {trainer}(vocab_size={size}, special_tokens=[UNK]{unk})",
        "tokenizer.train_from_iterator(text.splitlines(), trainer)  # one document per line"]
    if algorithm == "BPE":
        read = ['merges = json.loads(tokenizer.to_str())["model"]["merges"]  # in the order learned',
                f"print(len(merges), \"merges; the first {SHOWN_MERGES}:\", merges[:{SHOWN_MERGES}])"]
        imports = ["import json", *imports]
    elif algorithm == "WordPiece":
        read = ["# WordPiece keeps only its vocabulary; the ids of the new pieces follow the order of the merges",
                "vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1])",
                f"print([t for t, _ in vocab if t != UNK and len(t.removeprefix('##')) > 1][:{SHOWN_MERGES}])"]
    else:
        read = ['pieces = json.loads(tokenizer.to_str())["model"]["vocab"]  # [piece, log-probability]',
                f"print(sorted((p for p in pieces if len(p[0]) > 1 and p[0] != UNK), key=lambda p: -p[1])[:{SHOWN_MERGES}])"]
        imports = ["import json", *imports]
    read += [f"sentence = {literal(sentence)}", "print(tokenizer.encode(sentence).tokens)"]
    adds = ("# What the app adds: each merge's count (recounted by replaying the merges on the corpus's word counts: "
            "the library does not report them), the sentence replayed after the first N steps, tokens per word "
            "against the app's own tokenizers, and the from-scratch BPE (backend/engines/scratch/bpe.py) checked merge "
            "for merge.")
    return script([*imports, "from tokenizers import Tokenizer, models, pre_tokenizers, trainers"], text, train,
                  read, [adds])


GPT_APP = ("# The tiny GPT is the app's own from-scratch code, read as source (backend/engines/scratch/tiny_gpt.py "
           "and loop.py): this imports the app's modules, so run it from a checkout of the app.")
GPT_ADDS = ("# What the app adds: the plan (how long the run should take, refused when it cannot fit), Stop, the "
            "loss plot, the overfitting verdict, the model in Anatomy and Decoding, and the download.")


def _settings(result: dict, defaults: dict) -> dict:
    """The run's settings, the endpoint's defaults where the result leaves one out."""
    return {**defaults, **{k: v for k, v in (result.get("settings") or {}).items() if v is not None}}


def _app_corpus(inputs: dict) -> list[str]:
    """`what, text = corpora.corpus_text(...)`: the app's own reading of the run's corpus."""
    corpus = str(inputs.get("corpus") or "glossary").strip().lower()
    if corpus == "paste":
        pasted = str(inputs.get("text") or "")
        if len(pasted) > MAX_LITERAL:
            return [f"pasted = open('pasted.txt', encoding='utf-8').read()  # the text you pasted "
                    f"({len(pasted):,} characters), saved as pasted.txt",
                    "what, text = corpora.corpus_text('paste', pasted)"]
        return [f"what, text = corpora.corpus_text('paste', {literal(pasted)})"]
    if corpus == "upload":
        name = file_name(inputs.get("upload") or "corpus.txt")
        return [f"what, text = corpora.corpus_text('upload', upload={name!r})  # the file you uploaded"]
    return [f"what, text = corpora.corpus_text({corpus!r})  # a corpus the app ships"]


def train_gpt(inputs: dict, result: dict) -> str:
    s = _settings(result, run_settings.GPT_DEFAULTS)
    scheme = str(result.get("tokens") or inputs.get("tokens") or tiny_gpt.SCHEMES[0])
    vocab = int(float(inputs.get("vocab_size") or result.get("vocab_size") or s["vocab_size"]))
    if scheme == "bytes":  # one token per byte value: the vocabulary is the byte tokenizer's own
        vocab = tiny_gpt.byte_tokenizer().get_vocab_size()
    steps = int(s["steps"])
    options = {"steps": steps, "batch": int(s["batch"]), "learning_rate": float(s["learning_rate"]),
               "eval_every": int(s["eval_every"]), "temperature": float(s["temperature"]), "seed": int(s["seed"])}
    report = run_settings.report_every(steps)  # as the app sets it for the run's steps
    if report != tiny_gpt.Settings.report_every:
        options["report_every"] = report
    settings = ", ".join(f"{k}={v!r}" for k, v in options.items())
    body = _app_corpus(inputs) + [
        f"tok = tiny_gpt.make_tokenizer({scheme!r}, text, {vocab})",
        f"data = tiny_gpt.Data.split(tiny_gpt.encode(tok, text), {int(s['context'])})  # context",
        f"model = tiny_gpt.build_model(tok.get_vocab_size(), {int(s['layers'])}, {int(s['heads'])}, "
        f"{int(s['width'])}, {int(s['context'])}, {options['seed']})  "
        "# layers, heads, width, context, seed",
        "print(tiny_gpt.param_count(model), \"parameters\")",
        f"settings = tiny_gpt.Settings({settings})",
        "for event in tiny_gpt.train_steps(model, tok, data, settings):",
        '    if event["event"] == "eval":',
        '        print(event["step"], event["val_loss"], repr(event["sample"]))']
    return script(["from backend.engines.scratch import corpora, tiny_gpt"], [GPT_APP], body, [GPT_ADDS])


S2S_APP = ("# The tiny encoder-decoder is the app's own from-scratch code, read as source "
           "(backend/engines/scratch/seq2seq.py and loop.py): this imports the app's modules, so run it from a "
           "checkout of the app.")
S2S_ADDS = ("# What the app adds: the plan (how long the run should take, refused when it cannot fit), Stop, the loss "
            "and exact-match plot, the test table, its look inside one translation's three kinds of attention "
            "(/translate_toy), and the download.")


def train_seq2seq(inputs: dict, result: dict) -> str:
    s = _settings(result, run_settings.SEQ2SEQ_DEFAULTS)
    steps, width, seed = int(s["steps"]), int(s["width"]), int(s["seed"])
    options = {"steps": steps, "batch": int(s["batch"]), "learning_rate": float(s["learning_rate"]),
               "eval_every": int(s["eval_every"]), "seed": seed}
    report = run_settings.report_every(steps)  # as the app sets it for the run's steps
    if report != seq2seq.Settings.report_every:
        options["report_every"] = report
    settings = ", ".join(f"{k}={v!r}" for k, v in options.items())
    body = [
        "train, val, test = (list(seq2seq_data.load(k)) for k in seq2seq_data.SPLITS)  # the shipped toy dates",
        "tok = seq2seq.build_tokenizer(train)",
        f"model = seq2seq.build_model(tok.get_vocab_size(), {int(s['layers'])}, {int(s['heads'])}, "
        f"{width}, {run_settings.SEQ2SEQ_FFN_SCALE * width}, {seed}, tok)  # layers, heads, width, feed-forward width, seed",
        "print(seq2seq.param_count(model), \"parameters\")",
        f"settings = seq2seq.Settings({settings})",
        "outcome = loop.Outcome()  # the model as trained lands in outcome.model",
        "for event in seq2seq.train_steps(model, tok, train, val, settings, outcome=outcome):",
        '    if event["event"] == "eval":',
        '        print(event["step"], event["val_loss"], event["val_exact_match"])',
        "print(\"test exact match\", seq2seq.evaluate(outcome.model, tok, test)[\"exact_match\"])"]
    return script(["from backend.engines.scratch import loop, seq2seq, seq2seq_data"], [S2S_APP], body, [S2S_ADDS])
