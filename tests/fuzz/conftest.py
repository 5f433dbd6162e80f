"""The fuzz tier's public-mode app, started once for the tier (hosting modes and the siege read the
same settings; two starts cost about a minute of the suite)."""

from __future__ import annotations

import pytest

from tests.conftest import running_app


@pytest.fixture(scope="package")
def public_url():
    with running_app("app-public.log", extra_env={"TLAB_PUBLIC": "1", "TLAB_MODEL_DIRS": None}) as url:
        yield url
