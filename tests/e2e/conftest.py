"""Fixtures of the e2e tier's own (the app itself: tests/conftest.py's lane_app)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def notebook_writer(app_url):
    """The code view's notebook writer (components/shell/code_view.py), with the endpoints declared as app.py's
    page declares them (their JSON's place among the outputs a script gets back) and the lane's app as the
    address a page would name."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TLAB_PROFILE", "local")
        from app import build_app
        from components.shell import code_view

        build_app()
        mp.setattr(code_view, "client_url", lambda: app_url)
        yield code_view


@pytest.fixture(scope="session")
def notebook_kernel():
    """One Python kernel for every downloaded notebook the tier runs (each start imports the libraries anew:
    ~6 s), started by the first notebook's client and shut down after the last (download_runner.execute empties
    its namespace and moves it into each notebook's empty folder)."""
    from nbclient.util import run_sync

    held: dict = {}
    yield held
    if held.get("km") is not None:
        run_sync(held["km"].shutdown_kernel)(now=True)
