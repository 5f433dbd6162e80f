"""The integration tier's shared fixtures."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.snippet_runner import runner_in_temp


@pytest.fixture(scope="session")
def snippet_runner():
    """One fresh, offline interpreter for every snippet test of the session (tests/helpers/snippet_runner.py)."""
    runner = runner_in_temp()
    yield runner
    runner.close()
    shutil.rmtree(runner.folder, ignore_errors=True)
