"""Deeply nested JSON in the places a visitor's JSON is read gets a readable refusal, not a
"maximum recursion depth exceeded", and the server stays healthy."""

from __future__ import annotations

import uuid

from tests.helpers.raw import UNREADABLE, call

DEEP = "[" * 100_000


def test_deep_json_in_decode_and_compare_strings_is_refused_readably(app_url):
    for api_name, args, name in (("/decode", ["Once upon a time", DEEP], "settings"),
                                 ("/compare_decoding", ["Once upon a time", DEEP], "strategies")):
        event, message = call(app_url, api_name, args, session_hash=uuid.uuid4().hex)
        assert event == "error", (api_name, message)
        assert f"{name} is nested" in message and "recursion" not in message, message
        assert not UNREADABLE.search(message), message
    event, out = call(app_url, "/decode", ["Once", {"strategy": "greedy", "max_new_tokens": 2}])
    assert event == "complete" and out[0]["n_new_tokens"] == 2  # healthy after
