"""The first hour, guided: each step opens its tab with a prepared example, asks the learner to predict
before revealing, and then shows a "What to look for" card written from a run of that very example.

`STEPS` is plain data (the tab, its link query, the question); `card(step, ...)` runs the step's example
through the same backend entry point its tab's API calls and writes the card from those numbers, so the
card says what the tab will show. `open_query(step, extra)` is the link query that opens the tab (the
attention step with both sentences, at the head the card names).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.shell import course, md_text
from components.shell.book import LETTER

FLIES_A, FLIES_B = "time flies like an arrow", "fruit flies like a banana"
TOKENIZE = "Tokenizing text is a core task of NLP."
PROMPT = "Transformers are the"
QUESTION = "make a model smaller and faster for production"


@dataclass(frozen=True)
class Step:
    key: str  # the tab it opens
    predict: str  # asked before the card is revealed
    query: dict = field(default_factory=dict)  # the link query that opens the tab with the example


STEPS: tuple[Step, ...] = (
    Step("pipelines", "Will the book's complaint letter come out negative, and how sure will the model be?",
         {"tab": "pipelines-classify", "text": LETTER, "batch": "0"}),
    Step("tokenizers", f"Into how many pieces will each model cut \"{TOKENIZE}\", and where will it cut "
                       "'Tokenizing'?", {"tab": "tokenizers", "text": TOKENIZE}),
    Step("attention", f"Which word will 'flies' look at most in \"{FLIES_A}\", and which in \"{FLIES_B}\"?",
         {"tab": "attention", "text": FLIES_A, "text_b": FLIES_B, "role": "encoder"}),
    Step("anatomy", "Will the block recomputed by hand from the weights match the model's own numbers to 4 "
                    "decimals?", {"tab": "anatomy"}),
    Step("decoding", f"Which token will greedy pick after \"{PROMPT}\", and how likely is it?",
         {"tab": "decoding", "prompt": PROMPT, "strategy": "greedy", "max_new": "16"}),
    Step("search", f"Will the best passage for \"{QUESTION}\" share the question's words, or only its meaning?",
         {"tab": "search", "query": QUESTION}),
)
assert [s.key for s in STEPS] == [tab for tab, _ in course.FIRST_HOUR], "the route follows course.FIRST_HOUR"


FINDS = ("attention",)  # steps whose Open button opens the tab at what the card found (its layer and head)


def open_query(step: Step, extra: dict | None = None) -> dict:
    """The query that opens the step's tab: its example, plus what the card found (the attention head)."""
    return {**step.query, **{k: str(v) for k, v in (extra or {}).items()}}


# ---------------------------------------------------------------- cards, from a run's numbers
def classify_card(r: dict) -> tuple[str, dict]:
    first = r["results"][0]
    label, score = first["labels"][0], first["scores"][0]
    runner, second = first["labels"][1], first["scores"][1]
    return (f"The classifier says **{md_text(label)}** with score **{score:.3f}**; the next label, "
            f"{md_text(runner)}, gets {second:.3f}. Look at the bar chart: a score is the model's confidence "
            "(a softmax), not a guarantee that it is right.", {})


def tokenize_card(r: dict) -> tuple[str, dict]:
    parts = []
    for role, res in r["results"].items():
        toks = [t for t in res["tokens"] if not t["special"]]
        word = [t["token"] for t in toks if t["start"] < 10 and t["end"] <= 10]  # 'Tokenizing' is characters 0-10
        parts.append(f"the {role}'s {md_text(res['algorithm'])} tokenizer cuts it into **{len(toks)}** pieces "
                     f"(+{res['count'] - len(toks)} special), 'Tokenizing' into **{' + '.join(map(md_text, word))}**")
    return ("Of this sentence, " + "; ".join(parts) + ". Look at the colours: a piece that continues a word "
            "is marked, and the two models disagree on where words break.", {})


def flies_head(payload: dict) -> dict:
    """The layer and head where 'flies' in sentence A looks most at 'time' and 'flies' in sentence B most
    at 'fruit' (the larger of the two smaller weights), with both weights."""
    tokens, b = payload["tokens"], payload["sentence_b_start"]
    fa, fb = tokens.index("flies"), b + tokens[b:].index("flies")
    ta, tb = tokens.index("time"), b + tokens[b:].index("fruit")
    best = None
    for li, layer in enumerate(payload["attention"]):
        for h, w in enumerate(layer):
            score = min(w[fa][ta], w[fb][tb])
            if best is None or score > best[0]:
                best = (score, payload["layers"][li], h, w[fa][ta], w[fb][tb])
    _, layer, head, wa, wb = best
    return {"layer": layer, "head": head, "weight_a": wa, "weight_b": wb}


def attention_card(r: dict) -> tuple[str, dict]:
    found = flies_head(r["payload"])
    return (f"In **layer {found['layer']}, head {found['head']}**, 'flies' looks at **'time'** with weight "
            f"**{found['weight_a']:.3f}** in sentence A and at **'fruit'** with weight **{found['weight_b']:.3f}** "
            "in sentence B: the same head reads each 'flies' through the word before it, the first step to "
            "telling the verb from the insect. The tab opens at that head.",
            {"layer": found["layer"], "head": found["head"]})


def anatomy_card(r: dict) -> tuple[str, dict]:
    worst = max(r["layers"], key=lambda x: x["max_abs_diff"])
    ok = "within" if r["max_abs_diff"] < r["tolerance"] else "NOT within"
    return (f"All {len(r['layers']) - 1} layers recomputed by hand agree with the model's own hidden states "
            f"{ok} {r['tolerance']:.0e}: the largest difference is **{r['max_abs_diff']:.2e}** (at "
            f"{md_text(worst['name'])}). Look at the code beside each step: that is all a block does.", {})


def decoding_card(r: dict) -> tuple[str, dict]:
    step = r["steps"][0]
    others = [c for c in step["candidates"] if c["token_id"] != step["token_id"]][:2]
    said = ", ".join(f"{md_text(repr(c['token']))} {c['prob']:.3f}" for c in others)
    return (f"Greedy picks **{md_text(repr(step['token']))}** with probability **{step['prob']:.3f}** "
            f"(then {said}); the whole text's sequence log-prob is **{r['sequence_logprob']:.3f}**. Look at the "
            "step table: greedy always takes row 1, sampling may not.", {})


def search_card(r: dict) -> tuple[str, dict]:
    top = r["results"][0]
    words = {w.strip("?.,").lower() for w in QUESTION.split() if len(w) > 3}
    shared = sorted(w for w in words if w in top["text"].lower())
    return (f"The best passage is **{md_text(top.get('title') or top['text'][:40])}** with cosine similarity "
            f"**{top['score']:.3f}**; it shares {len(shared)} of the question's {len(words)} longer words "
            f"({md_text(', '.join(shared)) or 'none'}). Look at the map: meaning, not spelling, puts it near "
            "the question.", {})
