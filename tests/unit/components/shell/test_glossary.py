"""The one glossary (components/shell/glossary.py): every term the UI's own strings use is in it, each
definition says what the code computes (units checked against the function that makes the number), and
its patterns read the same way in Python as glossary.js reads them."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

from components.shell.glossary import ENTRIES, GLOSSARY, find_terms, patterns

ROOT = Path(__file__).resolve().parents[4]

# Words the UI writes in capitals that are not the book's subject, or are values rather than terms:
# file formats, units, label names the data sets use, special tokens, colours, layer/head names (L3H5).
PLAIN = {"JSON", "JSONL", "HTML", "API", "MB", "KB", "GB", "CSV", "TSV", "UTF-8", "ASCII", "CPU", "GPU", "URL",
         "PNG", "SVG", "US", "UK", "EU", "OK", "AI", "ID", "IDS", "PDF", "POSITIVE", "NEGATIVE", "LABEL", "PER", "ORG",
         "LOC", "MISC", "WORD", "PAD", "UNK", "MASK", "CLS", "SEP", "BOS", "EOS", "EN", "DE", "FR", "NLP", "LM", "II",
         "XSS", "CUDA", "RAM", "RSS", "FAQ", "TODO", "NO_ANSWER", "ANSWER", "NONE", "AND", "OR", "NOT", "IMDB",
         "SST", "SST-2", "CNN", "GGUF", "Q4_1", "vLLM", "ZeroGPU", "MMR", "SQUAD", "BIO", "IOB", "IOB2",
         "MPS", "GPT2", "HF", "CI", "CSS", "HTTP", "UI", "POST", "GET", "IP", "README", "TF", "IDF", "TF-IDF", "BM25", "ONNX", "LLM", "RNN", "LSTM", "SGD", "AI21"}
ACRONYM = re.compile(r"(?<![\w#-])[A-Z][A-Z0-9]{1,}(?:-[A-Z0-9]+)?(?![\w-])")
NOT_WORDS = re.compile(r"^(?:[0-9A-F]{6}|L\d+H?\d*|H\d+|[A-Z]\d+)$")  # hex colours, L3H5 names, T5


def ui_strings() -> list[str]:
    """Every string constant the UI's code holds (components/ and app.py): what a learner can be shown."""
    out = []
    for path in [ROOT / "app.py", *sorted((ROOT / "components").rglob("*.py"))]:
        if path.name == "glossary.py":  # the definitions themselves
            continue
        tree = ast.parse(path.read_text())
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings: never shown
        out += [n.value for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]
    return out


def test_every_acronym_the_ui_writes_is_defined_or_plain():
    undefined = set()
    for s in ui_strings():
        spans = [(a, b) for _, a, b in find_terms(s)]
        for m in ACRONYM.finditer(s):  # an acronym counts as defined where a term's match covers it
            w = m.group()
            if not (NOT_WORDS.match(w) or w in PLAIN or any(a <= m.start() and m.end() <= b for a, b in spans)):
                undefined.add(w)
    assert not undefined, f"terms the UI writes without a glossary entry: {sorted(undefined)}"


@pytest.mark.parametrize("text, term", [
    ("entropy", "entropy"), ("perplexity", "perplexity"), ("distinct-2", "distinct-n"),
    ("distinct-3", "distinct-n"), ("KL", "KL divergence"), ("recall@10", "recall@k"), ("p95 ms", "p95"),
    ("seqeval", "seqeval"), ("entity F1", "F1"), ("ROUGE-1", "ROUGE"), ("ROUGE-2", "ROUGE"), ("ROUGE-L", "ROUGE"),
    ("BLEU", "BLEU"), ("logit lens", "logit lens"), ("logits", "logit"), ("softmax", "softmax"),
    ("temperature", "temperature"), ("top-k", "top-k"), ("top-p", "top-p"), ("beam search", "beam search"),
    ("4 beams", "beam search"), ("attention heads", "attention head"), ("layer", "layer"), ("tokens", "token"),
    ("WordPiece", "WordPiece"), ("BPE", "BPE"), ("int8", "int8"), ("quantization", "quantization"),
    ("distillation", "distillation"), ("latency", "latency"), ("MRR", "MRR"), ("F1", "F1"),
    ("exact match", "exact match"), ("model time 0.46 s", "model time"), ("in nats", "nats"),
])
def test_the_terms_the_issue_names_are_defined(text, term):
    assert [t for t, _, _ in find_terms(text)] == [term]
    assert term in GLOSSARY and GLOSSARY[term].endswith(".")


def test_terms_are_found_whole_and_not_inside_other_words():
    assert find_terms("recall@10 and recall@100") == [("recall@k", 0, 9), ("recall@k", 14, 24)]
    assert [t for t, *_ in find_terms("the LM head, the task head and attention heads")] == ["attention head"]
    assert find_terms("tokenization playground headers layered ints") == []
    assert [t for t, *_ in find_terms("an encoder-decoder and an IVF-PQ index")] == ["encoder-decoder", "IVF-PQ"]
    assert [t for t, *_ in find_terms("self-attention, then the logit lens")] == ["attention", "logit lens"]


def test_patterns_are_plain_for_javascript_too():
    """No capturing groups (glossary.js numbers its alternatives by group), compiled alone in Python,
    longest term first (so 'logit lens' wins over 'logit' where both start)."""
    rows = patterns()
    assert [t for t, _, _ in rows] == sorted(GLOSSARY, key=lambda t: (-len(t), t))
    for term, definition, source in rows:
        assert re.compile(source).groups == 0, term
        assert "(?P" not in source and "\\A" not in source and "\\Z" not in source, term
        assert definition == GLOSSARY[term] and 40 <= len(definition) <= 420, term


# ---------------------------------------------------------------- definitions against the code
def test_entropy_units_are_the_codes():
    from backend.engines.attention.extract import head_summary
    from backend.engines.generation.filters import entropy

    assert entropy(np.array([0.5, 0.5])) == pytest.approx(math.log(2))  # Decoding: nats
    uniform = np.full((1, 1, 2, 2), 0.5)
    assert float(head_summary(uniform, [False, False])["entropy"][0, 0]) == pytest.approx(1.0)  # Attention: bits
    d = GLOSSARY["entropy"]
    assert "Decoding reports it in nats" in d and "Attention's head summary in bits" in d
    assert "1 nat = 1.443 bits" in GLOSSARY["nats"] and 1 / math.log(2) == pytest.approx(1.443, abs=5e-4)


def test_perplexity_distinct_and_kl_are_what_the_code_computes():
    import torch

    from backend.engines.generation.filters import distinct_n, perplexity
    from backend.interventions.effects import kl

    assert perplexity(2 * math.log(0.25), 2) == pytest.approx(4.0)  # exp(-mean log-prob), natural log
    assert "exp of the mean negative log-prob per token (natural log)" in GLOSSARY["perplexity"]
    assert distinct_n([1, 2, 1, 2, 1], 2) == pytest.approx(2 / 4)  # unique pairs / all pairs
    assert "Unique n-grams divided by all n-grams" in GLOSSARY["distinct-n"]
    p, q = torch.log(torch.tensor([[0.5, 0.5]])), torch.log(torch.tensor([[0.9, 0.1]]))
    assert float(kl(p, q)[0]) == pytest.approx(0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1))
    assert "KL(before || after), in nats" in GLOSSARY["KL divergence"]


def test_search_and_summary_scores_are_what_the_code_computes():
    from backend.pipelines import metrics
    from backend.search.index import recall_at_k as index_recall
    from backend.search.reader_eval import recall_at_k as retriever_recall

    assert index_recall(np.array([[1, 2, 9]]), np.array([[1, 2, 3]]), 3) == pytest.approx(2 / 3)
    assert retriever_recall([[4, 1], [2, 0]], [1, 3], ks=(2,))[0]["recall"] == pytest.approx(0.5)
    d = GLOSSARY["recall@k"]
    assert "share of the exact search's top k" in d and "share of questions whose right passage" in d
    assert set(metrics._rouge_scorer().rouge_types) == {"rouge1", "rouge2", "rougeL"}
    assert all(w in GLOSSARY["ROUGE"] for w in ("ROUGE-1", "ROUGE-2", "ROUGE-L", "0 to 1", "stemming"))
    said = metrics.bleu("the cat sat on the mat", "the cat sat on the mat")
    assert said["bleu"] == pytest.approx(100.0) and "13a tokenizer, exp smoothing" in said["signature"]
    assert "0 to 100" in GLOSSARY["BLEU"] and "13a tokenizer, exp smoothing" in GLOSSARY["BLEU"]


def test_every_entry_has_a_pattern_that_finds_its_own_name():
    for term, (_, source) in ENTRIES.items():
        name = {"distinct-n": "distinct-2", "recall@k": "recall@10"}.get(term, term)
        assert [t for t, *_ in find_terms(name)] == [term], (term, source)
