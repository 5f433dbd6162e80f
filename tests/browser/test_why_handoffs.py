"""The Why helpers test_why_qa_span.py uses (QUICK, _only, _run). The hand-offs into Why this module
once checked, each on a whole page of its own, are walked on one page in test_handoffs.py."""

from __future__ import annotations



