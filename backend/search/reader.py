"""Ask the corpus (retriever-reader, chapter 7 of the book).

The retriever's top passages go to a reader:
- an extractive QA model (`book` profile): the best span over all passages; it cites the
  passage the span came from;
- the instruct decoder (`local` profile, method "instruct-fallback"): prompted with numbered
  passages and asked to answer from them only and cite them as [1], [2]; the citations
  are parsed from its reply (and checked to be passages it was actually given).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from backend.runtime.errors import InputError
from backend.engines.tasks import support
from backend.engines.tasks.instruct import chat_generate
from backend.runtime.validation import check_text

MAX_PASSAGE_CHARS = 450  # keeps the decoder's prompt short (SmolLM2 is small and slow)
MAX_ANSWER_TOKENS = 64  # the instruct reader's reply


def build_messages(question: str, passages: list[dict]) -> list[dict]:
    blocks = "\n\n".join(f"[{i}] {p['title']}: {p['text'][:MAX_PASSAGE_CHARS]}"
                         for i, p in enumerate(passages, start=1))
    return [{"role": "user", "content":
             "Answer the question using only the numbered passages below. Cite the passages "
             "you used by their numbers in square brackets, like [1]. If the passages do not "
             f"contain the answer, say so.\n\nPassages:\n{blocks}\n\nQuestion: {question}"}]


def parse_citations(answer: str, n_passages: int) -> list[int]:
    """Passage numbers cited as [n] or [n, m], in order of first mention, within range."""
    seen: list[int] = []
    for group in re.findall(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]", answer):
        for num in re.split(r"\s*[,;]\s*", group):
            n = int(num)
            if 1 <= n <= n_passages and n not in seen:
                seen.append(n)
    return seen


def check_question(question: str) -> str:
    return check_text(question, "corpus_question")


def generative_answer(model, tokenizer, question: str, passages: list[dict],
                      max_new_tokens: int = MAX_ANSWER_TOKENS, chat: Callable[[list[dict], int], dict] | None = None) -> dict:
    """Instruct decoder, greedy; -> answer text and the passage numbers it cited.

    `chat(messages, max_new_tokens)`: who writes the reply (the generation server's
    `remote_chat.chat`); default `chat_generate` with `model` here. Both refuse a prompt past the
    context window in the same words."""
    question = check_question(question)
    messages = build_messages(question, passages)
    reply = (chat(messages, max_new_tokens) if chat is not None
             else chat_generate(model, tokenizer, messages, max_new_tokens=max_new_tokens))
    text = reply["text"]
    cited = parse_citations(text, len(passages))
    source = "reader"
    if not cited and text:
        # Small instruct models often forget to cite: attribute by shared content words,
        # and say that this is what happened.
        cited = overlap_citations(text, passages)
        source = "word overlap (the reader cited no passage)"
    return {"answer": text, "cited": cited, "citations_from": source,
            "reader_method": "instruct-fallback", "prompt_tokens": reply["prompt_tokens"],
            "finish_reason": reply.get("finish_reason"), "notices": list(reply.get("warnings") or [])}


_STOP = set("""a an the of to in on for and or is are was were be been by with as at from that this
these those it its which what who how many much does do did has have had not no can will would
there their than then into about such per one two""".split())


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9\-]+", text.lower()) if w not in _STOP}


def overlap_citations(answer: str, passages: list[dict], min_shared: int = 2) -> list[int]:
    """Passage numbers sharing the most content words with the answer (at least min_shared)."""
    words = _content_words(answer)
    scored = []
    for i, p in enumerate(passages, start=1):
        shared = len(words & _content_words(p["title"] + " " + p["text"]))
        if shared >= min_shared:
            scored.append((shared, -i))
    scored.sort(reverse=True)
    return [-i for _, i in scored[:2]]


def extractive_answer(model, tokenizer, question: str, passages: list[dict]) -> dict:
    """Best span over the passages (each read separately); cites the passage it came from."""
    from backend.engines.qa.extractive_qa import answer_question

    question = check_question(question)
    best = None
    for i, p in enumerate(passages, start=1):
        res = answer_question(model, tokenizer, question, p["text"], top_n=1)
        if res["answers"] and (best is None or res["answers"][0]["score"] > best[1]["score"]):
            best = (i, res["answers"][0])
    if best is None:
        return {"answer": "", "cited": [], "citations_from": "reader", "reader_method": "model",
                "score": 0.0}
    return {"answer": best[1]["answer"], "cited": [best[0]], "citations_from": "reader",
            "reader_method": "model", "score": round(float(best[1]["score"]), 4)}


def read(lm_model, lm_tokenizer, method: str, question: str, passages: list[dict]) -> dict:
    """Dispatch on how the `qa` role is served."""
    if not passages:
        raise InputError("No passages were retrieved, so there is nothing to answer from.")
    if "ForQuestionAnswering" in type(lm_model).__name__:
        return extractive_answer(lm_model, lm_tokenizer, question, passages)
    return generative_answer(lm_model, lm_tokenizer, question, passages)


def span_reader_answer(model, tokenizer, question: str, passages: list[dict], read=None) -> dict:
    """The chapter 7 retriever-reader: the reader trained here (span head, [CLS] as "no answer") reads
    each retrieved passage; the best span whose passage does not choose "no answer" is the answer.

    -> {"answer", "passage" (1-based, or None), "start", "end" (offsets in that passage's text),
        "margin" (best span - [CLS] logit), "no_answer", "threshold" (it answers where the margin is above it),
        "per_passage": [{passage, answer, margin, no_answer}], "closest": the passage with the largest margin}
    `read(question, text)`: the reader's `answer(..., top_n=1)` for one passage (an evaluation passes a
    memo, so a passage read for the top 3 is not read again for the top 5)."""
    from backend.engines.qa import reader as span_reader

    question = check_question(question)
    top, rows = span_reader.read_passages(model, tokenizer, question, [p["text"] for p in passages], read)
    return {"answer": top["answer"] if top else "", "passage": top["passage"] if top else None,
            "start": top["start"] if top else None, "end": top["end"] if top else None,
            "margin": top["margin"] if top else None, "no_answer": top is None,
            "threshold": rows[0]["threshold"] if rows else None,  # it answers where best span - [CLS] > this
            "per_passage": [{k: r[k] for k in ("passage", "answer", "margin", "no_answer")} for r in rows],
            "read": len(rows),  # the first passages it may answer from (its depth, chosen on validation)
            "closest": _closest(rows)}


def _closest(rows: list[dict]) -> dict | None:
    """The passage whose best span came nearest to beating "no answer" (the largest margin), for a refusal."""
    scored = [r for r in rows if r["margin"] is not None]
    if not scored:
        return None
    r = max(scored, key=lambda r: r["margin"])
    return {"passage": r["passage"], "answer": r["answer"], "margin": r["margin"]}


WHY_UNSUPPORTED = ("A generative reader writes each word from what it learned, not by copying the passages, so a "
                   "fluent answer can state numbers, names and facts the passages never gave (or the opposite of "
                   "what they say: this check finds missing words, not a contradiction).")
_CITATION = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_LINK = re.compile(r"(?i)\b(?:https?://|www\.)[^\s<>()\[\]]+")


def check_answer(answer: str, question: str, passages: list[dict]) -> dict:
    """The generated answer against the retrieved passages (backend.engines.tasks.support, as summaries are
    checked): its numbers, names and content words that no passage (nor the question) contains, with
    offsets into `answer`; a link the passages do not contain is flagged too, and a citation of a passage
    number that was not retrieved. Citation marks like [1] are not read as numbers. Names are capitalised spans (no NER model runs here)."""
    answer = answer or ""
    masked = _CITATION.sub(lambda m: " " * len(m.group(0)), answer)  # same length: offsets stay the answer's
    source = "\n".join([question] + [f"{p.get('title', '')}: {p.get('text', '')}" for p in passages])
    out = support.check_support(masked, source, None)
    links = []
    for m in _LINK.finditer(masked):
        url = m.group(0).rstrip(".,;:!?")
        if url not in source:
            links.append({"text": url, "start": m.start(), "end": m.start() + len(url), "kind": "link",
                          "found_by": "links", "reason": "no retrieved passage contains this link"})
    for m in _CITATION.finditer(answer):  # a citation of a passage the reader was never given
        nums = [int(n) for n in re.findall(r"\d+", m.group(0))]
        if any(not 1 <= n <= len(passages) for n in nums):
            links.append({"text": m.group(0), "start": m.start(), "end": m.end(), "kind": "citation",
                          "found_by": "citations", "reason": f"only {len(passages)} passage(s) were retrieved: "
                          f"there is no passage {', '.join(str(n) for n in nums if not 1 <= n <= len(passages))}"})
    spans = [(i["start"], i["end"]) for i in links]
    kept = [i for i in out["unsupported"] if not any(s < i["end"] and i["start"] < e for s, e in spans)]
    out["unsupported"] = sorted(kept + links, key=lambda i: i["start"])
    out["counts"] = {k: sum(1 for i in out["unsupported"] if i["kind"] == k) for k in support.KINDS + ("link", "citation")}
    out["counts"]["total"] = len(out["unsupported"])
    out["why"] = WHY_UNSUPPORTED
    out["against"] = f"the question and the {len(passages)} retrieved passage(s)"
    return out
