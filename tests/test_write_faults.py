"""Faults during writes: build, add and rename killed with SIGKILL between and during file writes, a full disk, two
writers on one cache, and a cache replaced while it is read. After each, the cache is the previous one or the new
one (never a mix), read_cache accepts it, and the page opened on it shows no exception.

The writers run as real ``topic-atlas`` commands in a subprocess (tests/fault_writer.py chooses the moment of death).
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from pipeline import cache
from pipeline.operations.rename import rename_topic
from pipeline.runtime.errors import TargetError
from pipeline.runtime.parquet import read_frame
from tests.conftest import PAPERS, SEED, needs_shared

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fault_writer.py"
APP = REPO / "dashboard" / "app.py"
RENAME = [sys.executable, "-m", "topic_atlas", "rename"]  # the command line, as a user runs it


def digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def writer(point: str, *command: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(DRIVER), point, "--", *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), **environment},
    )


def assert_old_or_new(target: Path, old: dict[str, str], is_new) -> str:
    """'old' when ``target`` is byte for byte the old cache, 'new' when it reads and ``is_new(atlas)``; else fails."""
    atlas = cache.read_cache(target)  # raises on a partial or mixed cache
    if digest(target) == old:
        return "old"
    assert is_new(atlas), f"{target} is neither the old cache nor the new one"
    atlas.embeddings()
    return "new"


def assert_page_opens(target: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ATLAS_CACHE", str(target))
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    assert not app.exception, [element.value for element in app.exception]
    assert not app.error, [element.value for element in app.error]
    return app


@pytest.fixture
def atlas(seed_cache: Path, tmp_path: Path) -> Path:
    target = tmp_path / "atlas"
    shutil.copytree(seed_cache, target)
    return target


def first_topic(target: Path) -> int:
    return int(min(topic for topic in cache.read_cache(target).topics["topic"] if topic >= 0))


def labelled(topic: int, label: str):
    return lambda atlas: label in set(atlas.topics.loc[atlas.topics["topic"] == topic, "label"])


@pytest.mark.parametrize("point", ["1:before", "1:during", "5:during", "9:during", "swap:before", "swap:after"])
def test_a_rename_killed_at_any_write_leaves_the_old_or_the_new_cache(atlas: Path, point: str):
    old, topic = digest(atlas), first_topic(atlas)
    result = writer(point, "rename", "--cache", str(atlas), "--topic", str(topic), "--label", "Killed rename")
    assert result.returncode == -9, result.stderr[-2000:]
    outcome = assert_old_or_new(atlas, old, labelled(topic, "Killed rename"))
    assert outcome == ("new" if point == "swap:after" else "old")
    # The next writer takes the lock the dead one held, clears its leftovers and succeeds.
    rename_topic(atlas, topic, "After the crash")
    assert labelled(topic, "After the crash")(cache.read_cache(atlas))
    assert sorted(path.name for path in atlas.parent.iterdir()) == ["atlas"]


def test_the_page_opens_on_a_cache_whose_writer_was_killed_and_rereads_it_when_replaced(
    atlas: Path, monkeypatch: pytest.MonkeyPatch
):
    topic = first_topic(atlas)
    assert writer("swap:after", "rename", "--cache", str(atlas), "--topic", str(topic), "--label", "Swapped").returncode
    assert any(path.name.startswith(".atlas.building-") for path in atlas.parent.iterdir())  # the dead one's leftover
    app = assert_page_opens(atlas, monkeypatch)
    assert "Swapped" in str(app.selectbox) + str(app.multiselect) + str(app.markdown)
    rename_topic(atlas, topic, "Replaced under the page")  # the cache is replaced while the page is open
    app.run()
    assert not app.exception
    assert "Replaced under the page" in str(app.selectbox) + str(app.multiselect) + str(app.markdown)


@pytest.fixture
def new_papers(tmp_path: Path) -> Path:
    needs_shared(PAPERS)
    path = tmp_path / "new.parquet"
    read_frame(PAPERS).tail(5).to_parquet(path, index=False)
    return path


@pytest.mark.parametrize("point", ["2:during", "swap:after"])
def test_an_add_killed_mid_write_leaves_the_old_or_the_new_cache(atlas: Path, new_papers: Path, point: str):
    old = digest(atlas)
    n_before = cache.read_manifest(atlas)["n_documents"]
    result = writer(point, "add", "--cache", str(atlas), "--input", str(new_papers))
    assert result.returncode == -9, result.stderr[-2000:]
    outcome = assert_old_or_new(atlas, old, lambda grown: len(grown.documents) == n_before + 5)
    assert outcome == ("new" if point == "swap:after" else "old")


@pytest.mark.parametrize("point", ["1:during", "swap:before"])
def test_a_build_killed_mid_write_leaves_the_old_cache(atlas: Path, embedding_store: Path, point: str):

    old = digest(atlas)
    command = ["build", "--input", str(SEED), "--cache", str(atlas), "--embedding-cache", str(embedding_store)]
    result = writer(point, *command)
    assert result.returncode == -9, result.stderr[-2000:]
    assert assert_old_or_new(atlas, old, lambda _: False) == "old"


def test_a_full_disk_leaves_the_old_cache_and_says_so(atlas: Path, monkeypatch: pytest.MonkeyPatch):
    old, topic = digest(atlas), first_topic(atlas)
    real_save = np.save

    def full_disk(file, *args, **kwargs):  # the embeddings are the largest file: the disk fills there
        if ".building-" in str(file):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return real_save(file, *args, **kwargs)

    monkeypatch.setattr(np, "save", full_disk)
    with pytest.raises(TargetError, match="the disk is full .* the previous atlas is unchanged"):
        rename_topic(atlas, topic, "Never written")
    assert digest(atlas) == old
    assert sorted(path.name for path in atlas.parent.iterdir()) == ["atlas"]  # no staging folder, no lock file


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_place_that_may_not_be_written_is_one_line_and_leaves_the_old_cache(
    atlas: Path, monkeypatch: pytest.MonkeyPatch, code: int
):
    """Permissions, an immutable folder (chattr +i) or a read-only file system: the write fails with EACCES, EPERM
    or EROFS, while the new atlas is written or already while the lock is taken. The user's mistake to remedy, so one
    line naming the folder, not "a fault in Topic Atlas" with a traceback."""
    old, topic = digest(atlas), first_topic(atlas)
    real_save = np.save

    def refused(file, *args, **kwargs):
        if ".building-" in str(file):
            raise OSError(code, os.strerror(code), str(file))
        return real_save(file, *args, **kwargs)

    monkeypatch.setattr(np, "save", refused)
    with pytest.raises(TargetError, match=f"cannot write the new atlas there \\({os.strerror(code)}: .*unchanged"):
        rename_topic(atlas, topic, "Never written")
    assert digest(atlas) == old
    monkeypatch.setattr(np, "save", real_save)

    def no_lock(folder):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))

    monkeypatch.setattr(cache, "writer_lock", no_lock)
    with pytest.raises(TargetError, match="cannot write the new atlas there"):
        rename_topic(atlas, topic, "Never written")
    assert digest(atlas) == old


def test_two_writers_at_once_both_land_one_after_the_other(atlas: Path):
    topics = sorted(int(topic) for topic in cache.read_cache(atlas).topics["topic"] if topic >= 0)[:2]
    runs = [
        subprocess.Popen(
            [*RENAME, "--cache", str(atlas), "--topic", str(t), "--label", f"W{t}"],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for t in topics
    ]
    for run in runs:
        assert run.wait(300) == 0, run.stderr.read() if run.stderr else ""
    overrides = cache.read_manifest(atlas)["label_overrides"]
    assert {key: value["label"] for key, value in overrides.items()} == {str(t): f"W{t}" for t in topics}


def test_a_second_writer_refuses_with_a_clear_message_when_the_lock_is_held(atlas: Path):
    old, topic = digest(atlas), first_topic(atlas)
    with cache.writer_lock(atlas):
        result = subprocess.run(
            [*RENAME, "--cache", str(atlas), "--topic", str(topic), "--label", "X"],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "ATLAS_LOCK_WAIT_S": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 2
    assert f"is being written by pid {os.getpid()}" in result.stderr and "waited 1 s" in result.stderr
    assert "Traceback" not in result.stderr
    assert digest(atlas) == old


def test_read_cache_never_mixes_two_versions_swapped_under_it(atlas: Path, tmp_path: Path):
    topic = first_topic(atlas)
    other = tmp_path / "other"
    shutil.copytree(atlas, other)
    rename_topic(other, topic, "Other version")
    stop = threading.Event()

    def swap_forever() -> None:
        while not stop.is_set():
            staging = cache.staging_folder(atlas)
            shutil.rmtree(staging)
            shutil.copytree(other if np.random.rand() < 0.5 else atlas, staging)
            cache.publish_folder(staging, atlas)

    swapper = threading.Thread(target=swap_forever)
    swapper.start()
    try:
        for _ in range(30):
            read = cache.read_cache(atlas)
            renamed = str(topic) in (read.manifest.get("label_overrides") or {})
            assert labelled(topic, "Other version")(read) == renamed  # tables and manifest of one version
    finally:
        stop.set()
        swapper.join()
