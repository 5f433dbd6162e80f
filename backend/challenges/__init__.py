"""Challenges: a goal per chapter that the learner reaches with a tab, checked by running the real model on
the learner's answer (`check_challenge(id, answer_json)`); `challenges()` lists them."""

from backend.challenges.api import challenge, challenges, check_challenge, describe, try_query
from backend.challenges.registry import BY_ID, CHALLENGES

__all__ = ["BY_ID", "CHALLENGES", "challenge", "challenges", "check_challenge", "describe", "try_query"]
