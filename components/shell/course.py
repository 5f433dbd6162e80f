"""The book as a map: each chapter, what it teaches, the tabs that serve it, one thing to try.

Plain data, no Gradio: the Start page and every tab's header are drawn from it, so a chapter
is named the same way everywhere. A "try" is a link's query (components/shell/links.py), so a Start
button and a shared link open a tab by the same path. Notebook names are the companion
repository's (https://github.com/nlp-with-transformers/notebooks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.shell.book import LETTER

NOTEBOOKS_REPO = "https://github.com/nlp-with-transformers/notebooks"
BOOK = "*Natural Language Processing with Transformers* (Tunstall, von Werra, Wolf; O'Reilly)"
UNICORNS = ("In a shocking finding, scientist discovered a herd of unicorns living in a remote, previously "
            "unexplored valley, in the Andes Mountains. Even more surprising to the researchers was the fact "
            "that the unicorns spoke perfect English.")


@dataclass(frozen=True)
class Chapter:
    number: int
    title: str
    notebook: str  # file name in the notebooks repository
    teaches: str  # one sentence
    tabs: tuple[str, ...]  # tab keys that serve it, the main one first; () = no tab yet
    try_label: str = ""  # the Start button's words after "Try: "
    try_query: dict = field(default_factory=dict)  # a link's query: {"tab": key, input name: value}
    gap: str = ""  # what of the chapter no tab shows (said honestly)

    @property
    def notebook_url(self) -> str:
        return f"{NOTEBOOKS_REPO}/blob/main/{self.notebook}"


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(1, "Hello Transformers", "01_introduction.ipynb",
            "What a transformer can do out of the box: classify, find entities, answer, summarize, translate "
            "and generate, each with one `pipeline()` call.",
            ("pipelines",), "classify the book's complaint letter",
            {"tab": "pipelines-classify", "text": LETTER, "batch": "0"}),
    Chapter(2, "Text Classification", "02_classification.ipynb",
            "From text to tokens to a classifier: tokenization, then a classifier trained on frozen "
            "features or by fine-tuning the whole model, judged with a confusion matrix.",
            ("tokenizers", "train", "why"), "tokenize a sentence",
            {"tab": "tokenizers", "text": "Tokenizing text is a core task of NLP."}),
    Chapter(3, "Transformer Anatomy", "03_transformer-anatomy.ipynb",
            "Self-attention as scaled dot products of queries and keys, multi-head attention, positions, "
            "and the encoder block with its norms, feed-forward layers and residual connections.",
            ("attention", "anatomy", "interventions"), "see which words 'flies' attends to",
            {"tab": "attention", "text": "time flies like an arrow", "text_b": "", "role": "encoder"}),
    Chapter(4, "Multilingual Named Entity Recognition", "04_multilingual-ner.ipynb",
            "Token classification: a label for each token, and how a multilingual encoder (XLM-R) "
            "carries what it learned in one language to others.",
            ("multilingual", "tokenizers", "pipelines", "train"), "find the entities in a news sentence",
            {"tab": "pipelines-ner", "text": "Angela Merkel met Emmanuel Macron in Berlin to discuss Airbus.",
             "aggregation": "simple", "batch": "0"}),
    Chapter(5, "Text Generation", "05_text-generation.ipynb",
            "How a language model picks each next token: greedy search, beam search, temperature, "
            "top-k and top-p sampling, and what each does to the text.",
            ("decoding",), "beam search on the book's unicorn prompt",
            {"tab": "decoding", "prompt": UNICORNS, "strategy": "beam", "max_new": "32", "num_beams": "5",
             "no_repeat": "2"}),
    Chapter(6, "Summarization", "06_summarization.ipynb",
            "Encoder-decoder models that condense a text, and how ROUGE scores a summary against a "
            "reference.",
            ("pipelines",), "summarize the letter beside the lead-3 baseline",
            {"tab": "pipelines-summarize", "text": LETTER}),
    Chapter(7, "Question Answering", "07_question-answering.ipynb",
            "Extractive QA: a reader finds the answer's span in a passage, and a retriever first finds "
            "the passages worth reading.",
            ("search", "pipelines"), "search a corpus by meaning",
            {"tab": "search", "query": "How do I make a model smaller and faster?"}),
    Chapter(8, "Making Transformers Efficient", "08_model-compression.ipynb",
            "Smaller and faster models: knowledge distillation, quantization, ONNX and pruning, each "
            "weighed against accuracy and latency.",
            ("efficiency",), "int8 against fp32 on the decoder", {"tab": "efficiency"},
            gap="Distillation, quantization, ONNX Runtime and pruning run on the emotion classifier in the "
                "Efficiency tab; pruning there is one-shot magnitude pruning without retraining (the book's "
                "movement pruning is not shown) and ONNX Runtime runs without Optimum's transformer fusions."),
    Chapter(9, "Dealing with Few to No Labels", "09_few-to-no-labels.ipynb",
            "What to do with few labels: zero-shot classification, embeddings as a lookup table, and "
            "training on a handful of examples.",
            ("train", "search", "pipelines"), "train a classifier three ways", {"tab": "train"}),
    Chapter(10, "Training Transformers from Scratch", "10_transformers-from-scratch.ipynb",
            "Building a large corpus, training a byte-level BPE tokenizer on it, and pretraining a "
            "GPT-2-style model for code.",
            ("scratch", "tokenizers"), "train a tokenizer and watch its merges", {"tab": "scratch"},
            gap="Here a tokenizer, a tiny GPT and a tiny encoder-decoder are trained from scratch on your CPU in "
                "minutes: the same recipe as the book's, at a toy's scale (the book's code model needs GPUs "
                "for days)."),
    Chapter(11, "Future Directions", "11_future-directions.ipynb",
            "Scaling laws, the cost of attention on long texts, and models that see, hear and read tables.",
            ("scratch",), "measure a scaling law and the cost of attention", {"tab": "scratch"},
            gap="From scratch measures a scaling law on a family of tiny GPTs and the cost of attention (with "
                "sliding-window, block-sparse and linear attention on the packaged models' own queries and keys), "
                "at the end of the tab. The models that see, hear and read tables (ViT, wav2vec 2.0, TAPAS, CLIP) "
                "do not run here: no package ships their weights offline."),
)

# A first hour: the order that builds each step on the last.
FIRST_HOUR: tuple[tuple[str, str], ...] = (
    ("pipelines", "10 min: run three pipeline tasks on your own text (chapter 1)."),
    ("tokenizers", "5 min: see what the model actually reads (chapter 2)."),
    ("attention", "15 min: watch attention resolve 'flies' in two sentences (chapter 3)."),
    ("anatomy", "10 min: recompute a whole block from the weights (chapter 3)."),
    ("decoding", "15 min: greedy, beam and sampling on one prompt (chapter 5)."),
    ("search", "5 min: search by meaning, then ask the corpus (chapters 7 and 9)."),
)


def chapters_for(tab: str) -> list[Chapter]:
    """The chapters a tab serves, in book order."""
    return [c for c in CHAPTERS if tab in c.tabs]


def header_markdown(tab: str) -> str:
    """The line above a tab: its chapter(s), each with its companion notebook."""
    found = chapters_for(tab)
    if not found:
        return ""
    said = " · ".join(f"ch. {c.number} *{c.title}* ([notebook]({c.notebook_url}))" for c in found)
    return f"**Book:** {said}"
