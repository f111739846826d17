"""The cache contract on damaged folders: every kind of bad cache is a CacheError that says how to rebuild."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from pipeline import cache
from pipeline.cache.write import write_parquet_in_parts
from pipeline.runtime.parquet import read_frame


@pytest.fixture
def cache_copy(seed_cache: Path, tmp_path: Path) -> Path:
    target = tmp_path / "cache"
    shutil.copytree(seed_cache, target)
    return target


def test_a_good_cache_reads(cache_copy: Path):
    topic_cache = cache.read_cache(cache_copy)
    assert len(topic_cache.documents) == 19


def test_missing_folder(tmp_path: Path):
    with pytest.raises(cache.CacheError, match="no cache folder") as error:
        cache.read_cache(tmp_path / "absent")
    assert "topic-atlas build" in error.value.rebuild_command


def test_partial_cache_without_manifest(cache_copy: Path):
    (cache_copy / cache.MANIFEST_FILE).unlink()
    with pytest.raises(cache.CacheError, match="missing"):
        cache.read_cache(cache_copy)


def test_corrupt_manifest(cache_copy: Path):
    (cache_copy / cache.MANIFEST_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(cache.CacheError, match="corrupt"):
        cache.read_cache(cache_copy)


def test_foreign_folder(tmp_path: Path):
    (tmp_path / cache.MANIFEST_FILE).write_text(json.dumps({"name": "some other tool"}), encoding="utf-8")
    with pytest.raises(cache.CacheError, match="not written by Topic Atlas"):
        cache.read_cache(tmp_path)
    assert not cache.is_cache_dir(tmp_path)


def test_older_schema_version(cache_copy: Path):
    manifest = json.loads((cache_copy / cache.MANIFEST_FILE).read_text())
    manifest["schema_version"] = 0
    (cache_copy / cache.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(cache.CacheError, match="schema version 0"):
        cache.read_cache(cache_copy)


def test_truncated_parquet(cache_copy: Path):
    path = cache_copy / cache.DOCUMENTS_FILE
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(cache.CacheError, match="documents.parquet is corrupt"):
        cache.read_cache(cache_copy)


def test_missing_topics_table(cache_copy: Path):
    (cache_copy / cache.TOPICS_FILE).unlink()
    with pytest.raises(cache.CacheError, match="topics.parquet is missing"):
        cache.read_cache(cache_copy)


def test_row_count_disagreeing_with_manifest(cache_copy: Path):
    manifest = json.loads((cache_copy / cache.MANIFEST_FILE).read_text())
    manifest["n_documents"] = 20
    (cache_copy / cache.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(cache.CacheError, match="19 rows"):
        cache.read_cache(cache_copy)


def test_embeddings_never_load_pickles(cache_copy: Path):
    import numpy as np

    np.save(cache_copy / cache.EMBEDDINGS_FILE, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(cache.CacheError, match="embeddings.npy"):
        cache.read_cache(cache_copy).embeddings()


def test_publish_swaps_atomically(tmp_path: Path):
    target = tmp_path / "cache"
    target.mkdir()
    (target / "old").write_text("old", encoding="utf-8")
    staging = cache.staging_folder(target)
    (staging / "new").write_text("new", encoding="utf-8")
    cache.publish_folder(staging, target)
    assert [path.name for path in target.iterdir()] == ["new"]
    assert not staging.exists()


def test_staged_cache_publishes_on_success_and_leaves_the_old_cache_on_failure(tmp_path: Path):
    target = tmp_path / "cache"
    target.mkdir()
    (target / "old").write_text("old", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        with cache.staged_cache(target) as staging:
            (staging / "half").write_text("half-written", encoding="utf-8")
            raise KeyboardInterrupt  # a killed write: even BaseException leaves nothing behind
    assert [path.name for path in target.iterdir()] == ["old"]
    assert [path.name for path in tmp_path.iterdir()] == ["cache"]  # no .cache.building-* folder left
    with cache.staged_cache(target) as staging:
        assert staging.parent == tmp_path and staging.name.startswith(".cache.building-")
        (staging / "new").write_text("new", encoding="utf-8")
    assert [path.name for path in target.iterdir()] == ["new"]
    assert [path.name for path in tmp_path.iterdir()] == ["cache"]


def test_embeddings_of_a_cache_replaced_after_its_tables_were_read_are_refused(seed_cache, tmp_path):
    """The tables of one version and the embeddings of the next never meet: a rename publishes a new version between
    read_cache and embeddings(), which then raises CacheReplaced (the page runs again on the new version)."""
    from pipeline.cache import CacheReplaced
    from pipeline.operations.rename import rename_topic

    target = tmp_path / "atlas"
    shutil.copytree(seed_cache, target)
    atlas = cache.read_cache(target)
    assert atlas.embeddings().shape[0] == len(atlas.documents)
    topic = int(min(t for t in atlas.topics["topic"] if t >= 0))
    rename_topic(target, topic, "Renamed meanwhile")
    with pytest.raises(CacheReplaced, match="replaced by a newer version") as caught:
        atlas.embeddings()
    assert "Rebuild" not in str(caught.value)
    assert cache.read_cache(target).embeddings().shape[0] == len(atlas.documents)


def test_a_cache_folder_has_the_permissions_mkdir_would_give(tmp_path: Path):
    """A new atlas folder is readable by whom the umask allows (mkdtemp alone makes it the owner's, 0700)."""
    import os

    from pipeline.cache.publish import staging_folder

    old = os.umask(0o022)
    try:
        assert staging_folder(tmp_path / "atlas").stat().st_mode & 0o777 == 0o755
        os.umask(0o077)
        assert staging_folder(tmp_path / "private").stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(old)


def test_a_table_written_in_parts_reads_as_the_whole_table(tmp_path: Path):
    """pipeline.cache.write.write_parquet_in_parts: row groups of 3 rows; a column all None in the first part and
    strings later, lists empty in one part, ints and floats: the file reads back as the table written at once."""
    table = pd.DataFrame(
        {
            "doc_id": [f"p{row}" for row in range(8)],
            "venue": [None, None, None, "ICLR", None, "ACL", "ICML", None],
            "keywords": [[], [], [], ["a", "b"], [], ["c"], [], ["d"]],
            "topic": list(range(-1, 7)),
            "x": [0.5 * row for row in range(8)],
        }
    )
    table.to_parquet(tmp_path / "whole.parquet", index=False)
    write_parquet_in_parts(table, tmp_path / "parts.parquet", part_rows=3)
    assert pq.ParquetFile(tmp_path / "parts.parquet").metadata.num_row_groups == 3
    pd.testing.assert_frame_equal(read_frame(tmp_path / "parts.parquet"), read_frame(tmp_path / "whole.parquet"))
