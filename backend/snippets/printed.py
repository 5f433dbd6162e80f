"""The client cell's last lines: the run's JSON (`found`, what the endpoint returned) printed in the words the
library cell prints, so that a notebook shows the same result twice and a reader can compare the two.

    printed.lines("search", result)  # -> ['for hit in found["results"]:', '    print(...)']

An endpoint without lines of its own prints its JSON whole (indented), which still holds every number the page
shows. Plain strings, like every snippet."""

from __future__ import annotations

from typing import Callable

WHOLE = ["import json", "print(json.dumps(found, indent=1, ensure_ascii=False))  # the endpoint's JSON, whole"]


def _search(result: dict) -> list[str]:
    # the library cell prints each hit's score (4 decimals), id and passage as embedded ("title: text"), cut at 80
    return ['for hit in found["results"]:',
            "    print(round(float(hit[\"score\"]), 4), int(hit[\"id\"]), "
            "f\"{hit['title']}: {' '.join(hit['text'].split())}\"[:80])"]


def _build_index(result: dict) -> list[str]:
    return ['print(found["count"], "passages indexed")']


def _generated(result: dict) -> list[str]:
    return ['for output in found["outputs"]:', '    print(repr(output["text"]))']


def _tokenize(result: dict) -> list[str]:
    return ['for role, r in found["results"].items():',
            '    if "error" not in r:',
            '        print(role, [t["token"] for t in r["tokens"]], r["ids"], [(t["start"], t["end"]) for t in r["tokens"]])']


def _classify(result: dict) -> list[str]:
    if (result.get("model") or {}).get("method") != "fine-tuned":
        return WHOLE
    return ['for r in found["results"]:',
            '    print(sorted(zip(r["labels"], r["scores"]), key=lambda lp: -lp[1]), r["sequence"][:40])']


def _completion(result: dict) -> list[str]:
    return ['print(repr(found["completion"]))']  # /generate_text's one sequence's new text


def _tagged(result: dict) -> list[str]:
    return ['print(list(zip(found["tokens"], found["tags"])))']  # each word with its tag


def _attributed(result: dict) -> list[str]:
    # the library cell prints each scored token and its score by each method the run asked for, in that order
    names = [m for m in ("integrated_gradients", "gradient_x_input", "occlusion") if m in (result.get("methods") or [])]
    return ['for i, t in enumerate(found["tokens"]):',
            '    print(t["token"], ' + ", ".join(f'round(found["scores"][{n!r}][i], 4)' for n in names) + ")"]


def _fixed(*lines: str) -> Callable[[dict], list[str]]:
    return lambda result: list(lines)


LINES: dict[str, Callable[[dict], list[str]]] = {
    "search": _search, "build_index": _build_index, "decode": _generated, "tokenize": _tokenize,
    "classify": _classify, "generate_text": _completion, "multilingual_ner": _tagged,
    "summarize": _fixed('print(found["summary"])'),
    "translate": _fixed('print(found["translation"])'),
    "fill_mask": _fixed('for c in found["candidates"]:',
                        '    print(c["token_str"], round(c["score"], 4), round(c["sentence_logprob"], 4))'),
    "zero_shot": _fixed('for r in found["results"]:  # cosines in the descriptions\' order',
                        '    cos = dict(zip(r["labels"], r["cosines"]))',
                        '    print([round(cos[label], 4) for label in found["label_descriptions"]], r["sequence"][:40])'),
    "ner": _fixed('for r in found["results"]:',
                  '    for e in r["entities"]:',
                  '        print(repr(r["text"][e["start"]:e["end"]]), e.get("entity_group", e.get("entity")), '
                  'e["start"], e["end"], round(float(e["score"]), 4))'),
    "qa": _fixed('print("no answer" if found["no_answer"] else repr(found["answer"]))',
                 'for a in found["answers"]:',
                 '    print(round(a["score"], 4), repr(a["answer"]), a["start"], a["end"])'),
    "attention": _fixed('print(found["tokens"], tuple(found["shape"]))'),
    "anatomy": _fixed('print([round(n, 2) for n in found["stream"]["norm"]])',
                      'lens = found["lens"]',
                      'for layer, (tokens, probs) in enumerate(zip(lens["top1"], lens["top1_prob"])):',
                      '    print(layer, tokens, [round(p, 3) for p in probs])'),
    "intervene": _fixed('nt = found["next_token"]',
                        'for t in nt["top"]:',
                        '    print(repr(t["token"]), round(t["p_before"], 4), round(t["p_after"], 4))',
                        'print("KL", round(nt["kl"], 4))',
                        'print("as it is:", repr(found["continuation"]["before"]))',
                        'print("with the edits:", repr(found["continuation"]["after"]))'),
    "efficiency": _fixed('dec = found["decoder"]',
                         'agree = dec["agreement"]',
                         'for name in ("fp32", "int8"):',
                         '    print(name, [p[name] for p in dec["prompts"]])',
                         'print(f"greedy: {agree[\'first_\' + str(agree[\'new_tokens\'])]} of {agree[\'of\']} prompts give '
                         'the same {agree[\'new_tokens\']} tokens")',
                         'print({r["name"]: round(r["perplexity"], 3) for r in dec["rows"]})'),
    "compress": _fixed('for r in found["rows"]:',
                       '    print(f"{r[\'key\']:>20}  accuracy {r[\'accuracy\']:.4f}")'),
    "train_tokenizer": _fixed('print(found["steps"], "merges; the first 50:", [[m["left"], m["right"]] for m in found["merges"][:50]])',
                              'print([t for t, _ in found["replay"]["timeline"][-1]["tokens"]])'),
    "train_gpt": _fixed('print(found["parameters"], "parameters")',
                        'for e in found["evals"]:',
                        '    print(e["step"], e["val_loss"], repr(e["sample"]))'),
    "train_seq2seq": _fixed('print(found["parameters"], "parameters")',
                            'for e in found["evals"]:',
                            '    print(e["step"], e["val_loss"], e["val_exact_match"])',
                            'print("test exact match", found["test"]["exact_match"])'),
    "train": _fixed('for method, r in found["methods"].items():',
                    '    print(method, "test accuracy", r["accuracy"])'),
    "train_ner": _fixed('test = found["test"]',
                        'for t, s in sorted(test["per_type"].items()):',
                        '    print(f"{t:6} precision {s[\'precision\']:.3f}  recall {s[\'recall\']:.3f}  F1 {s[\'f1\']:.3f}  '
                        '({s[\'support\']} entities)")',
                        'print("overall F1", round(test["overall"]["f1"], 4))'),
    "attribute": _attributed}


def lines(endpoint: str, result: dict) -> list[str]:
    """The lines that print `found` for this endpoint's run."""
    write = LINES.get(endpoint)
    return write(result or {}) if write is not None else list(WHOLE)
