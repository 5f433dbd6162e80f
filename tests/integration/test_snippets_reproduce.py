"""The snippets are true (issue #52): each covered endpoint runs here, in-process, on the local profile;
its "The same in Python" snippet then runs in ONE fresh interpreter (offline, every snippet in its own
namespace: torch is imported once, not once per snippet) and must give the endpoint's result back: the
same tokens for greedy, beam and seeded sampling, the same labels and scores within 1e-4, the same ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from backend import decoding, pipelines, snippets, tokenizers

# Runs each snippet in a fresh namespace and prints what it computed, as one JSON line. The same checkpoint
# is read from disk once per interpreter (from_pretrained memoised on its arguments: a loaded model is left
# as loaded, since no snippet changes its model in place), so the module costs one load per checkpoint.
DRIVER = textwrap.dedent('''
    import contextlib, io, json, sys
    import transformers
    loaded = {}
    for name in ("AutoTokenizer", "AutoModel", "AutoModelForCausalLM"):
        cls = getattr(transformers, name)
        def once(*args, _load=cls.from_pretrained, _name=name, **kwargs):
            key = (_name, repr(args), repr(sorted(kwargs.items())))
            if key not in loaded:
                loaded[key] = _load(*args, **kwargs)
            return loaded[key]
        cls.from_pretrained = once
    cases, found = json.load(open(sys.argv[1])), {}
    for case in cases:
        ns = {"__name__": "__snippet__"}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(case["python"], case["name"], "exec"), ns)
        if "out" in ns and "prompt_len" in ns:  # generation: each returned row's new tokens and text
            rows = [r[ns["prompt_len"]:].tolist() for r in ns["out"]]
            texts = [ns["tokenizer"].decode(r, skip_special_tokens=True) for r in rows]
            eos = ns["model"].generation_config.eos_token_id
            found[case["name"]] = {"rows": rows, "texts": texts, "eos": eos if isinstance(eos, list) else [eos]}
        elif "cosine" in ns:  # the embedding method: the library part, cosines of texts and descriptions
            found[case["name"]] = {"cosine": ns["cosine"].tolist(), "descriptions": ns["descriptions"]}
        elif "probs" in ns:
            found[case["name"]] = {"labels": ns["labels"], "probs": ns["probs"].tolist()}
        else:
            found[case["name"]] = {k[4:]: v for k, v in ns.items() if k.startswith("ids_")}
    print(json.dumps(found))
''')

TEXTS = ["The parcel arrived broken and late.", "Thank you, the books are wonderful!"]


@pytest.fixture(scope="module")
def runs():
    """(name, endpoint, inputs, result) for a couple of settings per covered endpoint."""
    made = []
    for name, kw in [("gen_greedy", dict(strategy="greedy", max_new_tokens=10)),
                     ("gen_sample", dict(strategy="sample", max_new_tokens=10, temperature=0.8, seed=7))]:
        inputs = {"prompt": "Dear customer,", **kw}
        made.append((name, "generate_text", inputs, pipelines.generate_text(**inputs)))
    for name, settings in [("decode_beam", {"strategy": "beam", "num_beams": 3, "no_repeat_ngram_size": 2,
                                            "max_new_tokens": 8, "num_return_sequences": 2}),
                           ("decode_sample", {"strategy": "sample", "top_k": 20, "top_p": 1.0, "seed": 11,
                                              "repetition_penalty": 1.3, "max_new_tokens": 8})]:
        made.append((name, "decode", {"prompt": "The book teaches"}, decoding.decode("The book teaches", settings)))
    made.append(("classify", "classify", {"text": "\n".join(TEXTS), "batch": True},
                 pipelines.classify("\n".join(TEXTS), batch=True)))
    for multi in (False, True):
        inputs = {"text": "\n".join(TEXTS), "labels": "complaint, praise, shipping", "multi_label": multi,
                  "template": "This text is about {}.", "batch": True}
        made.append((f"zero_shot_{multi}", "zero_shot", inputs,
                     pipelines.zero_shot(inputs["text"], inputs["labels"], multi, inputs["template"], True)))
    for special in (True, False):
        made.append((f"tokenize_{special}", "tokenize", {"text": "Tokenizing naïve text!", "special": special},
                     tokenizers.tokenize("Tokenizing naïve text!", add_special_tokens=special)))
    return made


@pytest.fixture(scope="module")
def reproduced(runs, tmp_path_factory):
    """Every snippet run in one fresh, offline interpreter."""
    cases = [{"name": name, "python": snippets.for_result(endpoint, inputs, result)["python"]}
             for name, endpoint, inputs, result in runs]
    path = tmp_path_factory.mktemp("snippets") / "cases.json"
    path.write_text(json.dumps(cases))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(path)], capture_output=True, text=True, env=env,
                          timeout=300, cwd="/")  # not the repository: the snippet may not import the app
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _trimmed(row: list[int], eos: list[int]) -> list[int]:
    """A returned row up to and including its first end token (generate pads the shorter beams after it)."""
    for i, t in enumerate(row):
        if t in eos:
            return row[: i + 1]
    return row


def test_generate_text_snippets_give_the_same_text(runs, reproduced):
    for name, endpoint, _, result in runs:
        if endpoint == "generate_text":
            assert reproduced[name]["texts"] == [result["completion"]], name


def test_decode_snippets_give_the_same_tokens(runs, reproduced):
    for name, endpoint, _, result in runs:
        if endpoint == "decode":
            got = reproduced[name]
            rows = [_trimmed(r, got["eos"]) for r in got["rows"]]
            assert rows == [o["token_ids"] for o in result["outputs"]], name


def test_classify_snippet_gives_the_same_labels_and_scores(runs, reproduced):
    (result,) = [r for n, e, _, r in runs if e == "classify"]
    got = reproduced["classify"]
    for row, probs in zip(result["results"], got["probs"]):
        mine = dict(zip([l.upper() for l in got["labels"]], probs))
        assert list(mine) and sorted(mine, key=lambda l: -mine[l]) == row["labels"]
        for label, score in zip(row["labels"], row["scores"]):
            assert abs(mine[label] - score) < 1e-4, (label, mine[label], score)


def test_tokenize_snippets_give_the_same_ids(runs, reproduced):
    for name, endpoint, _, result in runs:
        if endpoint == "tokenize":
            roles = {role: r["ids"] for role, r in result["results"].items() if "ids" in r}
            assert roles and reproduced[name] == roles, name


def test_the_client_call_of_decode_asks_for_the_same_run(runs):
    """/decode's arguments as the client call passes them (only what the strategy reads and differs from
    the endpoint's defaults) give the same tokens again."""
    for name, endpoint, inputs, result in runs:
        if endpoint == "decode":
            args = snippets.client_arguments(endpoint, inputs, result)
            again = decoding.decode(args["prompt"], args["settings"])
            assert [o["token_ids"] for o in again["outputs"]] == [o["token_ids"] for o in result["outputs"]], name


def test_zero_shot_snippets_give_the_same_cosines(runs, reproduced):
    """The local profile's zero-shot (embedding similarity): the snippet's cosines are the result's."""
    checked = 0
    for name, endpoint, inputs, result in runs:
        if endpoint != "zero_shot":
            continue
        got = reproduced[name]
        labels = [l.strip() for l in inputs["labels"].split(",")]
        assert got["descriptions"] == [result["label_descriptions"][l] for l in labels]
        for row, cosines in zip(result["results"], got["cosine"]):
            by_label = dict(zip(row["labels"], row["cosines"]))
            for label, cosine in zip(labels, cosines):
                assert abs(by_label[label] - cosine) < 1e-4, (name, label, by_label[label], cosine)
                checked += 1
    assert checked == 2 * len(TEXTS) * 3
