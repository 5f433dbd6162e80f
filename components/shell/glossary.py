"""The one glossary the whole UI reads: each term the app shows, defined in one sentence, with its unit.

Plain data, no Gradio. components/shell/assets/glossary.js (placed once per page by `components.shell.guide`) finds
these terms in what every tab draws and shows the definition on hover (desktop) or tap (phone);
tests/unit/test_glossary.py checks the definitions against the code that makes each number.

Each entry: term -> (definition, pattern). The pattern (a regular expression that Python's `re` and
JavaScript's RegExp read the same way; no capturing groups) says which spellings count; acronyms match
case-sensitively, words in any case (`(?i:...)`). Where one word means two things in this app, the
definition says both (entropy: nats in Decoding, bits in Attention).
"""

from __future__ import annotations

import re

_I = "(?i:{})".format  # a case-insensitive pattern

ENTRIES: dict[str, tuple[str, str]] = {
    # ---- text as the model reads it
    "token": ("A piece of text the model reads as one unit (a word, part of a word, a punctuation mark or a "
              "byte), each with an integer id in the tokenizer's vocabulary.", _I(r"tokens?")),
    "tokenizer": ("The program that cuts text into tokens and maps each to its id; every model reads text "
                  "through its own.", _I(r"tokenizers?")),
    "WordPiece": ("The encoder's tokenizer (BERT's, here all-MiniLM-L6-v2's, uncased): a word missing from "
                  "its vocabulary is split into known pieces, and a piece that continues a word starts "
                  "with ##.", _I(r"word-?pieces?")),
    "BPE": ("Byte-pair encoding, the decoder's tokenizer (GPT-2's, SmolLM2's): it starts from single bytes "
            "and merges the most frequent adjacent pair again and again; Ġ marks a piece that begins "
            "with a space.", r"(?:byte-level )?BPE|(?i:byte-pair encoding)"),
    "embedding": ("A vector of numbers that stands for a token or a whole text (384 numbers for "
                  "all-MiniLM-L6-v2); texts that mean similar things get vectors pointing in similar "
                  "directions.", _I(r"embeddings?")),
    "cosine similarity": ("How closely two vectors point the same way: from -1 (opposite) through 0 "
                          "(unrelated) to 1 (same direction); no unit.", _I(r"cosine(?: similarit(?:y|ies))?")),
    # ---- inside the model
    "attention head": ("One of the parallel attention computations in a layer (12 per layer in "
                       "all-MiniLM-L6-v2, 9 in SmolLM2-135M), each with its own query, key and value "
                       "projections and so its own pattern of which tokens look at which.",
                       "".join(rf"(?<!{w} )" for w in ("LM", "span", "task", "linear", "classification", "language-model", "output",
                                                        "QA", "token-classification"))
                       + _I(r"(?:attention )?heads?")),
    "layer": ("One transformer block (attention, then a feed-forward network, each added back to the "
              "residual stream and normalised); all-MiniLM-L6-v2 has 6, SmolLM2-135M has 30, counted "
              "from 0 here.", _I(r"layers?")),
    "attention": ("Each token's new vector is a weighted average of every visible token's value vector; "
                  "the weights (the softmax of scaled query-key dot products, each row summing to 1) are "
                  "what the Attention tab draws.", _I(r"(?:self-)?attention")),
    "QKᵀ": ("The attention scores: each query vector's dot product with every key vector (Q times K "
            "transposed); divided by √d, the square root of the head's dimension, so the softmax does not "
            "saturate.", r"QK(?:ᵀ|\^T)"),
    "grouped KV": ("Grouped-query attention: several query heads share one key/value head, so the model keeps "
                   "fewer keys and values (SmolLM2-135M: 9 query heads, 3 key/value heads).",
                   r"(?i:grouped) KV|(?i:grouped-query attention)"),
    "residual stream": ("The running vector each token carries through the model: every attention and "
                        "feed-forward sub-layer adds its output to it.", _I(r"residual stream")),
    "feed-forward": ("The two-layer network (MLP) applied to each token on its own after attention in "
                     "every block: widen, apply a non-linearity, project back.", r"(?i:feed-forward)|MLP"),
    "logit": ("The model's raw score for one choice (a next token, a label) before softmax; unbounded, "
              "and only the differences between logits matter.", _I(r"logits?(?! lens)")),
    "softmax": ("Turns logits into probabilities: exp(logit) divided by the sum of exp over all choices, "
                "so each is between 0 and 1 and they sum to 1.", _I(r"softmax")),
    "logit lens": ("Reading each layer's hidden state through the model's final norm and LM head as if "
                   "the model stopped there: it shows at which layer the eventual next token becomes the "
                   "top guess (after the last layer it is the model's own prediction).", _I(r"logit lens")),
    # ---- generation
    "log-prob": ("The natural logarithm of a probability, in nats: 0 means certain, more negative means "
                 "less likely; a sequence's log-prob is the sum over its tokens.",
                 _I(r"(?:sequence )?log-?prob(?:s|abilit(?:y|ies))?")),
    "greedy": ("Decoding that always takes the single most probable next token: the same text every "
               "time, often repetitive.", _I(r"greedy")),
    "beam search": ("Keeps the num_beams best partial sequences (by summed log-prob) at every step and "
                    "returns the best finished one; each kept sequence is a beam.", _I(r"beam(?:s| search)?")),
    "sampling": ("Drawing each next token at random in proportion to its probability (after temperature, "
                 "top-k and top-p); the same seed and settings draw the same text again.",
                 _I(r"sampl(?:ing|ed)")),
    "temperature": ("Divides the logits before softmax: below 1 sharpens the distribution (closer to "
                    "greedy), above 1 flattens it (rarer tokens more often), 1 leaves it as it is; no unit.",
                    _I(r"temperatures?")),
    "top-k": ("Sampling only among the k most probable next tokens; the others get probability 0 and the "
              "kept ones are renormalised to sum to 1.", _I(r"top-k")),
    "top-p": ("Nucleus sampling: only the smallest set of most probable next tokens whose probabilities add "
              "up to at least p is kept, then renormalised to sum to 1.", _I(r"top-p|nucleus")),
    "entropy": ("How spread out a probability distribution is, -Σ p·log p: 0 when one choice has all the "
                "probability. Decoding reports it in nats (natural log), Attention's head summary in "
                "bits (log base 2); 1 bit = 0.693 nats.", _I(r"entropy")),
    "nats": ("The unit of information measured with the natural logarithm (log base e): 1 nat = 1.443 "
             "bits.", _I(r"nats")),
    "perplexity": ("exp of the mean negative log-prob per token (natural log): roughly how many equally "
                   "likely tokens the model was torn between; 1 = certain, lower is better, no unit.",
                   _I(r"perplexit(?:y|ies)")),
    "distinct-n": ("Unique n-grams divided by all n-grams of the generated model tokens (distinct-2: pairs, "
                   "distinct-3: triples): 1.0 means nothing repeats, lower means more repetition.",
                   _I(r"distinct-(?:n|\d)")),
    # ---- changing the model
    "KL divergence": ("KL(before || after), in nats: how much a probability distribution changed (here the "
                      "next-token distribution after a head or layer is removed; in distillation, the "
                      "student against the teacher); 0 = unchanged, no upper bound.",
                      r"KL(?: divergence)?|(?i:Kullback-Leibler)"),
    "ablation": ("Removing a part of the model (zeroing a head's or a layer's output) to see what changes "
                 "without it.", _I(r"ablat(?:ion|ions|e|ed|ing)")),
    # ---- why the model said it (the Why tab)
    "integrated gradients": ("An attribution method: the gradient of the output with respect to each token's "
                             "embedding, averaged along a straight path from the baseline to the input and multiplied "
                             "by (input - baseline); the scores should add up to f(input) - f(baseline).",
                             _I(r"integrated[ -]gradients?")),
    "gradient x input": ("An attribution method: each token's embedding times the gradient of the output at the "
                         "input itself (one backward pass); blind where the output is saturated.",
                         _I(r"grad(?:ient)? x input")),
    "occlusion": ("An attribution method: a token's score is the output with the text minus the output with that "
                  "token removed (the rest close up), one forward pass per token.", _I(r"occlusion")),
    "attention rollout": ("Each layer's head-averaged attention plus the residual path, multiplied "
                "through the layers, read as how much each input token flows into the output's position; a share "
                "with no sign, read off attention weights, not off the output.", _I(r"(?:attention )?rollout")),
    "baseline": ("In Why: the input integrated gradients start from, every scored token replaced by [PAD] "
                 "(special tokens kept); elsewhere: the plain model or method the others are compared with.",
                 _I(r"baselines?")),
    "completeness": ("Integrated gradients' promise: the scores add up to f(input) - f(baseline); a gap over 5% "
                     "of that change means the integral did not converge, and a change under 0.001 is too small "
                     "to judge.", _I(r"completeness")),
    "Spearman": ("Spearman's rank correlation: the correlation of two lists' ranks, from -1 (opposite orders) "
                 "through 0 to 1 (the same order); here, whether two methods rank the tokens alike.",
                 r"Spearman(?:'s)?(?: rank correlation)?"),
    "attention sink": ("A token (usually the first) that many heads attend to when nothing else is useful to "
                       "them; it collects attention, and rollout's weight, whatever it says.",
                       _I(r"attention sinks?")),
    "saturation": ("An output near its limit (a softmax probability near 0 or 1) changes little when the input "
                   "changes, so its gradient is near zero there: local gradients then miss what matters.",
                   _I(r"saturat(?:ion|ed|es)")),
    "fine-tuning": ("Continuing to train a pretrained model on labelled examples of a task, so all its "
                    "weights adapt to it.", _I(r"fine-tun(?:ing|ed|e)")),
    "zero-shot": ("Doing a task with no labelled examples of it: here by comparing a text's embedding with "
                  "embeddings of the label descriptions (or by asking a chat model).", _I(r"zero-shot")),
    # ---- efficiency
    "fp32": ("32-bit floating point: 4 bytes per number, the models' full precision here.", r"fp32"),
    "int8": ("8-bit integers (-128 to 127) with a scale: 1 byte per weight instead of fp32's 4; here "
             "PyTorch's dynamic quantization of the Linear layers.", r"int8|qint8"),
    "quantization": ("Storing weights (and computing) with fewer bits, e.g. int8 instead of fp32: smaller "
                     "and often faster, with slightly different outputs.", _I(r"quantiz(?:ation|ed|e)")),
    "distillation": ("Training a small student model to match a larger teacher's softened output "
                     "probabilities (softmax at temperature T) as well as the true labels.",
                     _I(r"distill(?:ation|ed)")),
    "pruning": ("Setting weights to zero (here the smallest in magnitude, once, without retraining) so the "
                "model can be stored or run with fewer of them.", _I(r"pruning")),
    "ONNX": ("Open Neural Network Exchange: a file format for a model's computation graph, which ONNX Runtime "
             "runs without PyTorch.", r"ONNX(?: Runtime)?"),
    "latency": ("The time one operation takes (one query, one generated token, one request), in the unit "
                "shown beside it (ms or s).", _I(r"latenc(?:y|ies)")),
    "tok/s": ("Tokens per second: generated tokens divided by the seconds generation took; higher is "
              "faster.", r"tok/s"),
    "model time": ("The seconds the server spent on a result (loading a model, if this request had to, "
                   "included), measured on the server: not the time the request waited in the queue or travelled "
                   "to and from your browser; the page shows your own wait beside it when the two differ.",
                   _I(r"model time")),
    "p95": ("The 95th percentile: 95 of every 100 measurements were at or below it (here query latency in "
            "ms), so it shows the slow tail that the median hides.", r"p95"),
    # ---- search
    "recall@k": ("In an index comparison, the share of the exact search's top k results that the "
                 "approximate index also returns; in the retriever evaluation, the share of questions whose "
                 "right passage is among the first k retrieved. 0 to 1.", _I(r"recall@(?:k|\d+)")),
    "MRR": ("Mean reciprocal rank: the mean over questions of 1 / the rank of the first right result "
            "(1 = always first, 0.5 = second on average); 0 to 1.", r"MRR"),
    "FAISS": ("Facebook AI Similarity Search, the library that stores the embeddings and finds the nearest "
              "ones to a query.", r"FAISS"),
    "HNSW": ("Hierarchical navigable small world: a graph index; a search walks from node to nearer node, "
             "fast but approximate (efSearch sets how wide it looks).", r"HNSW"),
    "IVF": ("Inverted file index: the vectors are grouped into nlist clusters and a query searches only "
            "the nprobe nearest clusters; approximate.", r"IVF"),
    "IVF-PQ": ("An IVF index whose vectors are stored with product quantization (PQ): the smallest and the "
               "most approximate of the indexes here.", r"IVF-PQ"),
    "PQ": ("Product quantization: each vector is cut into m pieces and each piece stored as the id of its "
           "nearest centroid (bits per code): much smaller, approximate distances.", r"PQ"),
    "SQ8": ("Scalar quantization to 8 bits: each number of each vector stored as one byte, a quarter of "
            "fp32's size.", r"SQ8"),
    "PCA": ("Principal component analysis: the 2 directions along which the embeddings vary most, used to "
            "draw 384-number vectors on a flat map.", r"PCA|PC[12]"),
    # ---- scores
    "precision": ("As a score: of the items predicted as a class (or the n-grams of a summary), the share "
                  "that are right, 0 to 1. As a number format (fp32, int8): how many bits each number is "
                  "stored with.", _I(r"precision")),
    "recall": ("Of the items that should be found (the true members of a class, the reference's n-grams, "
               "the exact search's true neighbours), the share that were found; 0 to 1.", _I(r"recall(?!@)")),
    "F1": ("The harmonic mean of precision and recall, 2PR / (P + R): 0 to 1 (shown as 0-100 where the "
           "SQuAD script's convention is followed).", r"(?:macro |entity |token )?F1"),
    "seqeval": ("The standard library for scoring named entities: at entity level an entity counts only if "
                "its type and its exact span of words both match (seqeval's default mode, which this app "
                "reproduces and checks against it).", _I(r"seqeval")),
    "exact match": ("The share of predictions identical to a reference: for QA after SQuAD's normalisation "
                    "(lower case, no punctuation or articles); for the tiny encoder-decoder, the whole "
                    "output sequence. 0 to 1 (EM: the same, shown as 0-100).", _I(r"exact match") + r"|\bEM\b"),
    "ROUGE": ("Overlap of a summary with a reference (rouge-score, Porter stemming): ROUGE-1 counts single "
              "words, ROUGE-2 word pairs, ROUGE-L the longest common subsequence; each as precision, recall "
              "and F1 from 0 to 1.", r"ROUGE(?:-?(?:1|2|L|Lsum))?|rouge(?:1|2|L)"),
    "BLEU": ("sacrebleu's sentence BLEU, 0 to 100: the geometric mean of the 1- to 4-gram precisions of the "
             "translation against the reference, times a penalty for being too short (13a tokenizer, exp "
             "smoothing).", r"BLEU|(?i:sacrebleu)"),
    "confusion matrix": ("A table counting, for each true label (row), how often each label was predicted "
                         "(column): the diagonal is what was right.", _I(r"confusion matri(?:x|ces)")),
    "loss": ("What training minimises: here cross-entropy, the mean of -log p(the right token or label) in "
             "nats; lower is better.", _I(r"(?:validation |train(?:ing)? )?loss(?:es)?")),
    # ---- tasks and models
    "NER": ("Named entity recognition: a label for each token marking names of persons (PER), organisations "
            "(ORG), places (LOC) and others (MISC).", r"NER"),
    "QA": ("Question answering: here extractive, the answer is a span copied from the given text.", r"QA"),
    "NLI": ("Natural language inference: does one sentence follow from another (entailment), contradict it, "
            "or neither; the book's zero-shot classifier is built on it.", r"NLI"),
    "encoder": ("A transformer that reads the whole text at once, every token seeing every other (BERT, "
                "all-MiniLM-L6-v2): for classifying, tagging and embedding.", _I(r"encoders?")),
    "decoder": ("A transformer that writes one token at a time, each token seeing only those before it "
                "(GPT-2, SmolLM2): for generating text.", _I(r"decoders?")),
    "encoder-decoder": ("A transformer with both halves: the encoder reads the input, the decoder writes the "
                        "output while attending to it (BART, T5, translation models).", _I(r"encoder-decoders?")),
    "BERT": ("Google's encoder-only transformer (2018), pretrained by filling in masked words; "
             "all-MiniLM-L6-v2 has its architecture.", r"BERT"),
    "GPT": ("OpenAI's decoder-only transformer family, pretrained to predict the next token; GPT-2 (2019) is "
            "the book's generation model.", r"GPT(?:-2)?"),
    "BART": ("Facebook's encoder-decoder transformer, pretrained to rebuild corrupted text; distilbart is the "
             "book's summarizer.", r"BART"),
    "XLM-R": ("XLM-RoBERTa, a multilingual encoder trained on 100 languages: the book's NER model.", r"XLM-R"),
    "SentencePiece": ("A tokenizer that treats the text as a plain sequence of characters, spaces included "
                      "(written ▁ at the start of a piece), so it needs no language's word rules; XLM-R's and the "
                      "multilingual encoder's is a unigram model of 250,002 pieces shared by about 100 "
                      "languages.", r"SentencePiece"),
    "cross-lingual transfer": ("A model fine-tuned on labelled data in one language doing the task in others, "
                               "through the representations its multilingual pretraining shares across "
                               "languages.", _I(r"cross-lingual transfer")),
    "cross-lingual retrieval": ("Searching passages in one language with a question in another: a multilingual "
                                "embedder (multilingual-e5-small in Semantic search) puts a German question near "
                                "the English passage that answers it; an English-only embedder mostly does not.",
                                _I(r"cross-lingual (?:retrieval|search)")),
    "zero-shot transfer": ("Cross-lingual transfer to a language of which the fine-tuning saw no labelled "
                           "example: in the Multilingual tab, the German-trained model scored on French, "
                           "Italian and English.", _I(r"zero-shot (?:cross-lingual )?transfer")),
    "training step": ("One update of a fine-tune: a batch of training examples read, the loss's gradient taken, "
                      "the weights that learn moved once by the optimiser (AdamW here).", _I(r"training steps?")),
    "frozen": ("Left as pretraining made it during a fine-tune (no gradient, no update): in the Multilingual tab the "
               "embeddings and the lower encoder layers, so only the top layers and the token head learn and a "
               "run fits a CPU.", _I(r"frozen")),
    # ---- chapter 11: scaling and long texts
    "scaling law": ("How a model's loss falls as its size, data or compute grows; Kaplan et al. (2020) found "
                    "L(N) = (N_c / N)^alpha with alpha about 0.076 for non-embedding parameters N. From scratch "
                    "measures one on tiny GPTs.", _I(r"scaling[ -]laws?")),
    "power law": ("y = a x^(-alpha): a straight line of slope -alpha on log-log axes, so each doubling of x "
                  "divides y by the same factor 2^alpha.", _I(r"power[ -]laws?")),
    "compute budget": ("The arithmetic a training run may spend, in floating-point operations; Kaplan's estimate "
                       "is C = 6 N D (N non-embedding parameters, D training tokens).", _I(r"compute budgets?")),
    "sparse attention": ("Attention that scores only some (query, key) pairs, chosen by a fixed pattern (a "
                         "window, global tokens, random blocks as in BigBird), so its cost grows with the text's "
                         "length rather than its square.", _I(r"(?:block-)?sparse attention|block-sparse")),
    "linear attention": ("Attention with the softmax replaced by a product of feature maps, phi(q) . phi(k) with "
                         "phi(x) = elu(x) + 1, so the sum over keys is computed once: no T x T matrix, cost linear "
                         "in the length; its weights differ from softmax's.", _I(r"linear attention")),
    "sliding window": ("Sparse attention where each token sees only the tokens within a fixed distance (on a "
                       "decoder, the ones just before it); Longformer and Mistral use it.",
                       _I(r"sliding[ -]windows?")),
    "TAPAS": ("Google's BERT-based model that answers questions over tables (chapter 11); not runnable here "
              "(no offline weights).", r"TAPAS"),
    "CLIP": ("OpenAI's model that embeds images and texts in one space, trained on image-caption pairs "
             "(chapter 11); not runnable here (no offline weights).", r"CLIP"),
}

GLOSSARY: dict[str, str] = {term: definition for term, (definition, _) in ENTRIES.items()}


def _bounded(source: str) -> str:
    """A term's pattern, kept from matching inside a longer word (or a recall@10 inside recall@100)."""
    return rf"(?<![\w@-])(?:{source})(?![\w@]|-\w)"


def patterns() -> list[list[str]]:
    """[[term, definition, pattern], ...], longest term first: what components/shell/assets/glossary.js is given."""
    order = sorted(ENTRIES, key=lambda t: (-len(t), t))
    return [[t, ENTRIES[t][0], _bounded(ENTRIES[t][1])] for t in order]


_COMPILED = [(t, re.compile(p)) for t, _, p in patterns()]
_ANY = re.compile("|".join(f"({p})" for _, _, p in patterns()))


def find_terms(text: str) -> list[tuple[str, int, int]]:
    """[(term, start, end)] of every glossary term in `text`, as glossary.js finds them."""
    found = []
    for m in _ANY.finditer(text or ""):
        term = _COMPILED[m.lastindex - 1][0]
        found.append((term, m.start(), m.end()))
    return found
