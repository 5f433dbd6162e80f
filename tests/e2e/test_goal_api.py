"""The goals' API through gradio_client: /challenges lists them, /check_challenge runs the model on an answer
and says why, and a malformed answer comes back as a readable AppError naming what is wrong."""

from __future__ import annotations

import pytest
from gradio_client.exceptions import AppError

from tests.helpers.raw import UNREADABLE


def test_the_list_names_each_goal_its_format_and_tab(client):
    listed = client.predict(api_name="/challenges")
    ids = [c["id"] for c in listed]
    assert len(ids) >= 22 and {"flip-sentiment", "stop-the-loop"} <= set(ids)
    flip = listed[ids.index("flip-sentiment")]
    assert flip["chapter"] == 2 and flip["tab"] == "pipelines-classify"
    assert flip["answer_format"]["required"] == ["a", "b"] and flip["answer_format"]["example"]
    assert [c["chapter"] for c in client.predict(5, api_name="/challenges")] == [5, 5, 5]


def test_a_right_and_a_wrong_answer_get_their_verdicts(client):
    yes = client.predict("flip-sentiment", '{"a": "The film was great.", "b": "The film was awful."}',
                         api_name="/check_challenge")
    assert yes["passed"] and "flips the label" in yes["reason"]
    assert {yes["evidence"]["a"]["label"], yes["evidence"]["b"]["label"]} == {"POSITIVE", "NEGATIVE"}
    no = client.predict("first-merge", '{"corpus": "the cat sat on the mat"}', api_name="/check_challenge")
    assert not no["passed"] and "not 'x' + 'y'" in no["reason"] and no["hint"]


@pytest.mark.parametrize("cid,answer,said", [
    ("stop-the-loop", '{"prompt": "Hi", "max_new_tokens": 100}', "'max_new_tokens' is 100"),
    ("stop-the-loop", '{"prompt": "Hi"}', "missing 'max_new_tokens'"),
    ("flip-sentiment", "{'a': 'x', 'b': 'y'}", "not valid JSON"),
    ("no-such-goal", "{}", "No challenge 'no-such-goal': challenge_id must be one of"),
])
def test_a_malformed_answer_is_refused_readably(client, cid, answer, said):
    with pytest.raises(AppError) as err:
        client.predict(cid, answer, api_name="/check_challenge")
    assert said in str(err.value) and not UNREADABLE.search(str(err.value))
