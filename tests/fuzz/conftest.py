"""The fuzz tier's public-mode app, started once for the tier: hosting modes, the crowd, the siege (its
quotas set live for its module) and the memory soak (its first user: marked fresh_app, ordered first by
tests/conftest.py) share it; each start costs 15-25 s."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.helpers.app import running_app
@pytest.fixture(scope="package")
def public_app(tmp_path_factory):
    """The app in public mode (no model folders a visitor may name), with an upload folder of its own
    -> a namespace: url, uploads."""
    uploads = tmp_path_factory.mktemp("public-uploads")
    env = {"TLAB_PUBLIC": "1", "TLAB_MODEL_DIRS": None, "GRADIO_TEMP_DIR": str(uploads)}
    with running_app("app-public.log", extra_env=env) as url:
        yield SimpleNamespace(url=url, uploads=uploads)


@pytest.fixture(scope="package")
def public_url(public_app):
    return public_app.url
