"""Every public api_name with bad input: NaN and infinity, wrong types, huge texts, lone
surrogates, unknown choices, injection strings. Each bad value must come back as a readable
message that names the parameter as the API lists it (never an exception class, a traceback or
Gradio's "Could not preprocess"), and the server must stay healthy.

NaN, infinity and lone surrogates go through raw HTTP (tests/helpers/raw.py): gradio_client's
JSON encoder cannot send them, a hostile caller can.
"""

from __future__ import annotations

import math
import re
import uuid

import pytest
from gradio_client import Client, handle_file

from tests.helpers.api_cases import CASES, EXPECTED_ERRORS, LETTER, SEARCH
from tests.helpers.raw import UNREADABLE, call

NAN, INF = math.nan, math.inf
HUGE = "x" * 1_000_001
NUMERIC = [NAN, INF, -INF, "abc", {"a": 1}, [1, 2], True]
TEXT = [{"a": 1}, [1, 2], HUGE]
BOOL = ["maybe", {"a": 1}, 2, NAN]
CHOICE = ["no-such-choice", {"a": 1}, NAN]
FIELD = [{"a": 1}, [1, 2]]
FILE = ["/etc/passwd", {"path": "/etc/passwd"}, 12]
# Per (api_name, parameter): values of the gr.api endpoints, which take JSON as it comes.
SPECIAL = {
    ("/decode", "prompt"): [{"a": 1}, [1], NAN, HUGE],
    ("/decode", "settings"): [{"strategy": "nope"}, {"max_new_tokens": NAN},
                              {"strategy": "beam", "num_beams": 2, "length_penalty": 1e9, "max_new_tokens": 2},
                              {"strategy": "beam", "num_beams": 10**12}, {"strategy": "sample", "top_p": INF},
                              "not json", [1, 2], 12],
    ("/search", "k"): NUMERIC,  # a k over 100 is cut to 100, with a note
    ("/compare_decoding", "prompt"): [{"a": 1}, [1], NAN, HUGE],
    ("/compare_decoding", "strategies"): ["[", [1, 2], NAN,
                                          [{"strategy": "beam", "num_beams": 16, "max_new_tokens": 512}] * 4],
    ("/zero_shot", "template"): ["about {} {0}", "about {} {", "about {} {.__class__}", "{:>20000000}{{}}",
                                 "no placeholder", {"a": 1}],
    ("/build_index", "paste"): [{"a": 1}, [1, 2]],  # a huge paste is a valid (if slow) corpus
    ("/train_tokenizer", "text"): [{"a": 1}, [1, 2]],  # so is a 1 MB paste to train a tokenizer on (cap 2 MB)
    ("/train_gpt", "text"): [{"a": 1}, [1, 2]],  # or a tiny GPT
    ("/challenges", "chapter"): [*NUMERIC, 12, 0.5],
    ("/check_challenge", "challenge_id"): [{"a": 1}, [1], NAN, HUGE, "no-such-goal"],
    ("/check_challenge", "answer"): [{"a": 1}, [1, 2], NAN, HUGE, "not json", '{"corpus": 5}', '{"corpus": "x", "b": 1}',
                                     "[" * 5000],
}
# The decode-by-hand endpoints (gr.api): paths are JSON lists of ids or token texts.
PATHS = [[10**9], [-1], [NAN], [[1]], [{"a": 1}], "[" * 5000, "{not json", {"a": 1}, NAN, 12,
         list(range(500)), [" unbelievably tokenised"], ["x" * 1000]]
SPECIAL.update({
    ("/decode_by_hand", "prompt"): [{"a": 1}, [1], NAN, HUGE],
    ("/decode_by_hand", "path"): PATHS,
    ("/decode_by_hand", "top_k"): [*NUMERIC, 0, 10**12],
    ("/decode_by_hand", "action"): ["jump", {"a": 1}, NAN, [1]],
    ("/decode_by_hand", "n"): [*NUMERIC, 0, 10**12],
    ("/decode_by_hand", "seed"): [NAN, INF, "abc", {"a": 1}, [1, 2], -1, 2**70],
    ("/decode_by_hand", "chat_template"): BOOL,
    ("/generation_attention", "prompt"): [{"a": 1}, [1], NAN, HUGE],
    ("/generation_attention", "n"): [*NUMERIC, 0, 10**12],
    ("/generation_attention", "layer"): [NAN, INF, "abc", {"a": 1}, [1, 2], 10**12, 99],
    ("/generation_attention", "head"): [NAN, INF, "abc", {"a": 1}, [1, 2], 10**12, 99],
    ("/generation_attention", "path"): PATHS,
    ("/generation_attention", "chat_template"): BOOL,
})
SEARCH_SESSION_APIS = ("/search", "/ask_corpus", "/compare_indexes")


def bad_values(api_name: str, param: dict) -> list:
    name, component = param["parameter_name"], param["component"]
    if (api_name, name) in SPECIAL:
        return SPECIAL[(api_name, name)]
    if component in ("Slider", "Number"):
        return NUMERIC + ([10**12] if component == "Slider" else [])
    if component == "Textbox":
        return TEXT
    if component == "Checkbox":
        return BOOL
    if component == "Radio":
        return CHOICE
    if component == "Dropdown":
        return FIELD if name in ("text_field", "title_field") else CHOICE
    if component == "File":
        return FILE
    if component == "Checkboxgroup":
        return [["no-such-choice"], {"a": 1}, NAN]
    raise AssertionError(f"{api_name} {name}: no bad values for a {component}")


@pytest.fixture(scope="module")
def api(app_url):
    client = Client(app_url, verbose=False)
    info = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    session = f"fuzz-{uuid.uuid4().hex[:8]}"
    event, out = call(app_url, "/build_index", list(CASES["/build_index"]), session_hash=session)
    assert event == "complete", out
    return app_url, client, info, session


def _valid_args(api_name: str) -> list:
    return list(CASES[api_name] if api_name in CASES else EXPECTED_ERRORS[api_name][0])


def _readable(message: str) -> bool:
    return bool(message) and not UNREADABLE.search(message)


# How a message may name a parameter besides its API name (the attention tab's own words).
ALIASES = {"text_b": "second sentence", "query_index": "query token index", "strategies": "strateg"}


def _names(param: str, value, message: str) -> bool:
    m = message.lower()
    names = [param, param.replace("_", " "), ALIASES.get(param, param)]
    if isinstance(value, dict):  # a settings object: the message names the key at fault
        names += list(value)
    return any(n.lower() in m for n in names)


@pytest.mark.parametrize("api_name", sorted(set(CASES) | set(EXPECTED_ERRORS)))
def test_every_bad_value_is_refused_readably_by_name(api, api_name):
    url, _, info, session = api
    params = info[api_name]["parameters"]
    problems = []
    for i, param in enumerate(params):
        for value in bad_values(api_name, param):
            args = _valid_args(api_name)
            args[i] = value
            sid = session if api_name in SEARCH_SESSION_APIS else None
            event, out = call(url, api_name, args, session_hash=sid)
            shown = repr(value)[:40]
            if event != "error":
                problems.append(f"{param['parameter_name']}={shown}: accepted ({event})")
            elif not _readable(out):
                problems.append(f"{param['parameter_name']}={shown}: unreadable: {out[:200]}")
            elif not _names(param["parameter_name"], value, out) and param["parameter_name"] != "file":
                problems.append(f"{param['parameter_name']}={shown}: does not name it: {out[:200]}")
    assert not problems, f"{api_name}:\n" + "\n".join(problems)


# Valid calls whose text the surrogate test fuzzes where the shared case leaves the text empty
# (the shared /build_index case builds the glossary; a pasted corpus is its text input).
TEXT_VARIANTS = {"/build_index": ("paste", None, "Beam search keeps several hypotheses.\n\nTop-p sampling keeps the "
                                  "smallest set of tokens whose probability reaches p.", *SEARCH[3:])}
# Endpoints that take no free text at all (numbers, choices, flags): nothing to put a surrogate in.
WITHOUT_TEXT = {"/compare_indexes", "/status", "/efficiency", "/use_trained", "/download_trained", "/train",
                "/download_ner", "/download_gpt", "/train_ner", "/train_gpt", "/train_seq2seq", "/download_seq2seq",
                "/compress", "/evaluate_reader", "/multilingual_ner_transfer", "/multilingual_ner_train",
                "/scaling_law", "/scaling_add", "/attention_cost", "/challenges"}


@pytest.mark.parametrize("api_name", sorted(set(CASES) | set(EXPECTED_ERRORS)))
def test_lone_surrogates_in_text_are_replaced_or_refused_readably(api, api_name):
    url, _, info, session = api
    args = list(TEXT_VARIANTS.get(api_name) or _valid_args(api_name))
    texts = [i for i, p in enumerate(info[api_name]["parameters"])
             if (p["component"] == "Textbox" or p["parameter_name"] in ("prompt", "query", "question", "answer",
                                                                       "challenge_id"))
             and isinstance(args[i], str) and args[i]]
    if api_name in WITHOUT_TEXT:
        assert not texts, f"{api_name} now takes text: remove it from WITHOUT_TEXT so its text is fuzzed"
        return
    assert texts, (f"{api_name}'s valid case has no text value to fuzz: give it one in tests/helpers/api_cases.py "
                   "(or, if the endpoint takes no text, list it in WITHOUT_TEXT)")
    for i in texts:
        bad = list(args)
        bad[i] = args[i][:40] + " \ud800 \udfff end"
        sid = session if api_name in SEARCH_SESSION_APIS else None
        event, out = call(url, api_name, bad, session_hash=sid)
        if event == "error":
            assert _readable(out), out
            if api_name not in EXPECTED_ERRORS:
                assert "surrogate" not in out and "codec" not in out, out
        else:
            assert event == "complete", (event, out)


def test_zero_shot_template_is_substituted_not_formatted(api):
    url, client, _, _ = api
    out = client.predict(text="The parcel never arrived.", labels="complaint, praise",
                         template="Brace-free: {} here", api_name="/zero_shot")[-1]
    assert out["label_descriptions"] == {"complaint": "Brace-free: complaint here",
                                         "praise": "Brace-free: praise here"}


@pytest.mark.parametrize("api_name, args", [
    ("/classify", {"text": "<img src=x onerror=alert(1)> ![x](http://example.invalid/p.png)"}),
    ("/qa", {"context": "The code is ![x](http://example.invalid/p.png) and <b>bold</b>.",
             "question": "What is the code?"}),
])
def test_markdown_outputs_never_render_user_markup(api, api_name, args):
    _, client, _, _ = api
    out = client.predict(api_name=api_name, **args)
    for text in out:
        if isinstance(text, str):
            assert "<img" not in text and "<b>" not in text
            assert not re.search(r"(?<!\\)!\[", text) and "](http" not in text


def test_an_uploaded_title_never_becomes_a_remote_image(api, tmp_path):
    _, _, _, _ = api
    client = Client(api[0], verbose=False)
    f = tmp_path / "titles.jsonl"
    f.write_text('{"title": "![x](http://example.invalid/p.png)", "text": "Top-p sampling keeps the smallest set of tokens whose probability adds up to p."}\n'
                 '{"title": "<img src=http://example.invalid/q.png>", "text": "Beam search keeps the best partial sequences."}\n'
                 '{"title": "plain", "text": "Greedy decoding takes the most likely token."}\n')
    md, stats, _ = client.predict(choice="upload", file=handle_file(str(f)), text_field="text",
                                  title_field="title", api_name="/build_index")
    assert stats["count"] == 3
    html_out, _, res, _ = client.predict(query="What does top-p sampling keep?", k=3, api_name="/search")
    assert "<img" not in html_out and "&lt;img" in html_out
    answer_md, ans, _ = client.predict(question="What does top-p sampling keep?", k=3, api_name="/ask_corpus")
    assert "<img" not in answer_md and not re.search(r"(?<!\\)!\[", answer_md) and "](http" not in answer_md
    client.close()


def test_the_server_is_healthy_after_the_fuzz(api):
    _, client, _, _ = api
    tok = client.predict(text="still alive", api_name="/tokenize")[-1]
    assert tok["results"]["encoder"]["count"] == 4
    out = client.predict(text=LETTER, api_name="/classify")[-1]  # model_box left out: the profile's model
    assert sorted(out["results"][0]["labels"]) == ["NEGATIVE", "NEUTRAL", "POSITIVE"]
