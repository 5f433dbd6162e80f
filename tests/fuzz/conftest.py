"""The fuzz tier's public-mode app, started once for the tier: hosting modes, the crowd, the siege (its
quotas set live for its module) and the memory soak (its first user) share it; each start costs 15-25 s."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import running_app

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Tests marked `fresh_app` run first among this tier's tests (the memory soak measures the public app's
    growth from where a new app stands): stable, and the tier's tests keep their place in the session."""
    places = [n for n, item in enumerate(items) if Path(str(item.fspath)).resolve().parent == HERE]
    mine = [items[n] for n in places]
    ordered = [i for i in mine if i.get_closest_marker("fresh_app")] + \
              [i for i in mine if not i.get_closest_marker("fresh_app")]
    for n, item in zip(places, ordered):
        items[n] = item


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
