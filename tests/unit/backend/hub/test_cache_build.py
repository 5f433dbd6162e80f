"""The one builder shape (backend/hub/cache_build.py) and the fixed-work helpers (runtime/fixed_work.py)."""

import json

import pytest

from backend.hub import conversion
from backend.hub.cache_build import CacheBuild, DefaultRun
from backend.runtime import fixed_work


def _build(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text('{"text": "x"}\n')
    base = tmp_path / "base"
    base.mkdir()
    return CacheBuild("toy-v1", lambda: [data], lambda: b"settings"), data, base


def test_the_key_and_folder_are_conversions_own(tmp_path):
    build, data, base = _build(tmp_path)
    key = conversion.build_key("toy-v1", [data], base, b"settings")
    assert build.key(base) == key and build.folder(str(base), tmp_path) == conversion.trained_dir("toy-v1", key, tmp_path)
    data.write_text('{"text": "y"}\n')  # new data: a new key, so it builds again
    assert build.key(base) != key


def test_a_default_run_is_built_once_with_its_meta_and_results(tmp_path):
    build, _, base = _build(tmp_path)
    made = []

    def make(b, folder, progress):
        made.append(b)
        (folder / "results.json").write_text(json.dumps({"built_s": 1.5}))
        return {"built_s": 1.5}

    run = DefaultRun(build, make, "results.json", lambda r: r["built_s"])
    assert run.cached(base, tmp_path) is None
    folder, now = run.ensure("base model", base, root=tmp_path)
    assert now and run.cached(base, tmp_path) == folder == build.folder(base, tmp_path)
    assert json.loads((folder / conversion.META_FILE).read_text()) == {"recipe": "toy-v1", "built_s": 1.5}
    assert run.results(folder) == {"built_s": 1.5}
    again, now = run.ensure("base model", base, root=tmp_path)
    assert again == folder and not now and made == ["base model"]


def test_a_model_is_built_once_and_then_read_from_its_meta(tmp_path):
    build, _, base = _build(tmp_path)
    folder, meta = build.ensure_model(base, tmp_path, lambda tmp: {"steps": 3})
    assert meta == {"steps": 3, "cached": False} and (folder / ".complete").exists()
    assert build.ensure_model(base, tmp_path, lambda tmp: pytest.fail("built twice"))[1] == {"steps": 3, "cached": True}


def test_a_run_cut_short_is_refused_and_progress_says_first_use():
    fixed_work.finished(5, 5, "the toy")
    with pytest.raises(RuntimeError, match=r"^the toy stopped after 2 of 5 steps; nothing was cached$"):
        fixed_work.finished(2, 5, "the toy")
    assert str(fixed_work.cut_short(0, 72, "the fine-tune", "time budget")) == (
        "the fine-tune stopped after 0 of 72 steps (time budget); nothing was cached")
    said = []
    fixed_work.first_use(lambda f, text: said.append((f, text)), "the toy")(3, 4, 0.5)
    fixed_work.first_use(None, "the toy")(1, 4)  # no progress callback: nothing to say
    assert said == [(0.75, "Training the toy (first use only): step 3 of 4")]
