"""A build's key covers the code it runs (backend/hub/code_keys.py): the builder's module, the recipe and the
engine modules they import; a change to that code builds again, a reworded comment does not, and builds cached
before keep their keys while their code is the code they were built from."""

import pytest

from backend.hub import (builders, code_keys, compress_builder, conversion, corpus_reader_builder,
                         multilingual_builder, ner_builder, reader_builder)
from backend.scratch import scaling_api

BUILDS = {m.__name__.rsplit(".", 1)[1]: m.BUILD for m in (builders, ner_builder, reader_builder, corpus_reader_builder,
                                                          compress_builder, multilingual_builder)}
# The recipe (and serving) modules each build must cover, named here as a reader would look for them.
RECIPES = {
    "builders": ["backend/engines/classify/sentiment_recipe.py", "backend/engines/classify/finetune.py"],
    "ner_builder": ["backend/engines/ner/shape_recipe.py", "backend/engines/ner/serving.py",
                    "backend/engines/ner/token_classification.py"],
    "reader_builder": ["backend/engines/qa/reader_recipe.py", "backend/engines/qa/reader.py"],
    "corpus_reader_builder": ["backend/engines/qa/adaptation.py", "backend/hub/reader_builder.py"],
    "compress_builder": ["backend/engines/compression/benchmark_recipe.py", "backend/engines/compression/distill.py"],
    "multilingual_builder": ["backend/engines/ner/transfer_recipe.py", "backend/engines/ner/transfer.py"],
}


def _files(modules) -> set[str]:
    return {str(p.relative_to(code_keys.ROOT)) for p in code_keys.code_files(modules)}


def _changed(monkeypatch, target: str, edit):
    read = code_keys.read_source
    monkeypatch.setattr(code_keys, "read_source",
                        lambda p: edit(read(p)) if str(p).endswith(target) else read(p))
    code_keys._cached_digest.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_digests():
    code_keys._cached_digest.cache_clear()
    yield
    code_keys._cached_digest.cache_clear()


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_each_builds_code_covers_its_builder_recipe_and_the_build_shape(name):
    build = BUILDS[name]
    files = _files(build.code + ("backend.hub.cache_build",))
    assert f"backend/hub/{name}.py" in files and "backend/hub/cache_build.py" in files
    assert set(RECIPES[name]) <= files, set(RECIPES[name]) - files
    assert not any(f.startswith("backend/runtime/") for f in files)  # the plumbing does not rebuild a model


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_changing_the_recipes_code_changes_the_key_and_a_comment_does_not(name, monkeypatch, tmp_path):
    build, recipe_file = BUILDS[name], RECIPES[name][0]
    key = build.key(tmp_path)
    _changed(monkeypatch, recipe_file, lambda src: src + "\n# a comment\n")
    assert build.key(tmp_path) == key
    _changed(monkeypatch, recipe_file, lambda src: src + "\nEXTRA_STEP = 1\n")
    assert build.key(tmp_path) != key


def test_a_build_cached_before_keeps_its_key_while_its_code_is_unchanged(monkeypatch, tmp_path):
    build = BUILDS["ner_builder"]
    legacy = conversion.build_key(build.recipe, build.data(), tmp_path, build.settings())  # the key before code counted
    digest = code_keys.code_digest(build.code + ("backend.hub.cache_build",))
    monkeypatch.setitem(code_keys.BUILT_FROM, build.recipe, digest)
    assert build.key(tmp_path) == legacy
    monkeypatch.delitem(code_keys.BUILT_FROM, build.recipe)  # a new recipe version: its key holds its code
    assert build.key(tmp_path) != legacy


def test_the_scaling_family_and_the_conversion_key_their_code(monkeypatch, tmp_path):
    assert {"backend/scratch/scaling.py", "backend/engines/scratch/tiny_gpt.py",
            "backend/engines/scratch/loop.py"} <= _files(scaling_api.CODE)
    assert {"backend/hub/conversion.py", "backend/hub/e5s1.py"} <= _files(conversion.CONVERT_CODE)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"weights")
    key, folder = scaling_api.build_key(), conversion.converted_dir(gguf, tmp_path)
    _changed(monkeypatch, "backend/scratch/scaling.py", lambda src: src + "\nEXTRA = 1\n")
    assert scaling_api.build_key() != key and conversion.converted_dir(gguf, tmp_path) == folder
    _changed(monkeypatch, "backend/hub/e5s1.py", lambda src: src + "\nEXTRA = 1\n")
    assert conversion.converted_dir(gguf, tmp_path) != folder


def test_the_digest_reads_code_not_comments_docstrings_or_layout():
    a = 'def f(x):\n    """Doc."""\n    return x + 1  # one more\n'
    b = "def f(x):\n\n    return (x +\n            1)\n"
    assert code_keys.normalised(a) == code_keys.normalised(b)
    assert code_keys.normalised(a) != code_keys.normalised(a.replace("1", "2"))
