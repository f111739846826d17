"""The manifest's type (pipeline.cache.manifest.Manifest) against what the pipeline writes: a real build's
manifest.json, and the same atlas after a rename, an edit and an add of a collection, hold every required key of the
TypedDict and of its nested TypedDicts, no key it does not declare, and values of the declared scalar types; the
parameters' type declares exactly BuildConfig's fields; MANIFEST_KEYS are its required keys (and ``timings_s``)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from pipeline.cache import MANIFEST_FILE, MANIFEST_KEYS, read_manifest
from pipeline.cache.manifest import BuildParams, Manifest
from pipeline.config import BuildConfig
from pipeline.runtime.parquet import read_frame
from tests.conftest import PAPERS, SEED, needs_shared


def _is_typeddict(hint: Any) -> bool:
    return isinstance(hint, type) and typing.is_typeddict(hint)


def _arms(hint: Any) -> tuple[Any, ...]:
    """The members of a union (``X | None``), else the hint itself."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _scalar_fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` has the scalar type ``hint`` (JSON's: a float may be written as an int); True for hints
    that are not scalars (containers are checked by their keys)."""
    for arm in _arms(hint):
        if arm is type(None) and value is None:
            return True
        if arm is bool and isinstance(value, bool):
            return True
        if arm is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if arm is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if arm is str and isinstance(value, str):
            return True
        if arm not in (type(None), bool, int, float, str):
            return True
    return False


def problems(value: Any, typed: Any, where: str) -> list[str]:
    """What in ``value`` (a JSON object) disagrees with the TypedDict ``typed``: a required key missing, a key not
    declared, a scalar of another type; nested TypedDicts (alone, in lists, as dict values) checked the same way."""
    if not isinstance(value, dict):
        return [f"{where} is {type(value).__name__}, not an object"]
    hints = typing.get_type_hints(typed)
    found = [f"{where} lacks {key!r}" for key in sorted(typed.__required_keys__ - value.keys())]
    found += [f"{where} has {key!r}, which {typed.__name__} does not declare" for key in sorted(value.keys() - hints)]
    for key in sorted(value.keys() & hints.keys()):
        found += _value_problems(value[key], hints[key], f"{where}.{key}")
    return found


def _value_problems(value: Any, hint: Any, where: str) -> list[str]:
    if not _scalar_fits(value, hint):
        return [f"{where} is {value!r}, not {hint}"]
    for arm in _arms(hint):
        origin, args = typing.get_origin(arm), typing.get_args(arm)
        if _is_typeddict(arm) and isinstance(value, dict):
            return problems(value, arm, where)
        if origin is list and args and _is_typeddict(args[0]) and isinstance(value, list):
            return [problem for i, item in enumerate(value) for problem in problems(item, args[0], f"{where}[{i}]")]
        if origin is dict and len(args) == 2 and isinstance(value, dict):
            return [
                problem for key, item in value.items() for problem in _value_problems(item, args[1], f"{where}.{key}")
            ]
    return []


def written(cache_dir: Path) -> dict[str, Any]:
    return json.loads((cache_dir / MANIFEST_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed file built without an embedding store (tfidf-svd: no encoder)."""
    from pipeline.operations.build import run_build

    target = tmp_path_factory.mktemp("manifest") / "seed"
    run_build(SEED, target, embedding_store=None)
    return target


def test_a_builds_manifest_has_exactly_the_keys_the_type_declares(built: Path) -> None:
    manifest = written(built)
    assert problems(manifest, Manifest, "manifest") == []
    assert {"fit_check", "outlier_reasons", "layout_cache", "embedding_cache", "metrics"} <= manifest.keys()
    assert read_manifest(built) == manifest


def test_an_edited_renamed_and_grown_atlas_keeps_to_the_type(built: Path, tmp_path: Path) -> None:
    """A rename, a theme rename and a merge (label_overrides, theme_label_overrides, metrics_stale), then an add of
    a collection (add_history, lineage, collections with the atlas's own entry, coverage, journeys)."""
    from pipeline.ingest.collections import Collection
    from pipeline.operations import edit
    from pipeline.operations.add import run_add
    from pipeline.operations.rename import rename_topic

    needs_shared(PAPERS)
    target = tmp_path / "atlas"
    shutil.copytree(built, target)
    rename_topic(target, 0, "My own topic")
    edit.rename(target, "theme", 0, "My own theme")
    edit.merge_topics(target, [0, 1])
    manifest = written(target)
    assert {"label_overrides", "theme_label_overrides", "metrics_stale"} <= manifest.keys()
    assert problems(manifest, Manifest, "manifest") == []
    papers = tmp_path / "iclr2025.parquet"
    read_frame(PAPERS).head(40).to_parquet(papers, index=False)
    run_add(target, collections=[Collection(papers, "ICLR 2025 more", "ICLR", 2025)])
    manifest = written(target)
    assert {"add_history", "lineage", "collections", "coverage", "journeys", "n_documents_fitted"} <= manifest.keys()
    assert problems(manifest, Manifest, "manifest") == []


def test_the_checker_names_a_missing_an_undeclared_and_a_mistyped_key(built: Path) -> None:
    manifest = written(built)
    del manifest["created_at"]
    manifest["colour"] = "blue"
    manifest["fit_check"]["extra"] = 1
    manifest["n_topics"] = "two"
    assert problems(manifest, Manifest, "manifest") == [
        "manifest lacks 'created_at'",
        "manifest has 'colour', which Manifest does not declare",
        "manifest.fit_check has 'extra', which FitCheckEntry does not declare",
        "manifest.n_topics is 'two', not <class 'int'>",
    ]


def test_the_parameters_type_declares_every_build_config_field() -> None:
    assert set(typing.get_type_hints(BuildParams)) == {field.name for field in dataclasses.fields(BuildConfig)}
    assert BuildParams.__required_keys__ == set(typing.get_type_hints(BuildParams))


def test_the_keys_a_reader_requires_are_the_types_required_keys_and_the_timings() -> None:
    assert set(MANIFEST_KEYS) == Manifest.__required_keys__ | {"timings_s"}
