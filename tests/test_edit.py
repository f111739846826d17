"""Edits of an atlas without a refit (pipeline.operations.edit, ``topic-atlas edit``), on copies of a real cache.

The cache is the session's 300-paper slice of ICLR 2025 (tests/conftest.py, built by the real pipeline), copied
to each test's own folder before it is edited.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from pipeline import cache
from pipeline.operations import edit
from pipeline.operations.edit_log import EDITS_FILE, read_log
from pipeline.operations.edit_replay import replay_edits
from pipeline.runtime.errors import InputError, TargetError

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def atlas(slice_cache: Path, tmp_path: Path) -> Path:
    """A copy of the 300-paper cache that the test may edit."""
    target = tmp_path / "atlas"
    shutil.copytree(slice_cache, target)
    return target


def sizes(folder: Path) -> dict[int, int]:
    """{topic: papers} as documents.parquet counts them."""
    return sizes_of(cache.read_cache(folder))


def sizes_of(atlas: cache.TopicCache) -> dict[int, int]:
    return {int(k): int(v) for k, v in atlas.documents["topic"].value_counts().items()}


def largest_topics(folder: Path, count: int) -> list[int]:
    counted = sorted(((size, topic) for topic, size in sizes(folder).items() if topic >= 0), reverse=True)
    return [topic for _, topic in counted[:count]]


def assert_consistent(folder: Path, doc_ids: set[str]) -> cache.TopicCache:
    """The edited atlas reads back whole: every paper still there once, sizes of topics.parquet are the counts of
    documents.parquet, the hierarchy's leaves are the topics, subtopics lie in their topics, a rebuild accepts
    the folder."""
    atlas = cache.read_cache(folder)
    assert set(atlas.documents["doc_id"].astype(str)) == doc_ids and len(atlas.documents) == len(doc_ids)
    counted = atlas.documents["topic"].value_counts().to_dict()
    assert dict(zip(atlas.topics["topic"].astype(int), atlas.topics["size"].astype(int))) == counted
    real = sorted(int(topic) for topic in atlas.topics["topic"] if topic >= 0)
    assert atlas.manifest["n_topics"] == len(real)
    if len(real) > 1:
        assert sorted(atlas.hierarchy.iloc[0]["topics"]) == real and len(atlas.hierarchy) == len(real) - 1
    labels = atlas.topics.loc[atlas.topics["topic"] >= 0, "label"].str.casefold()
    assert labels.is_unique and (labels.str.len() > 0).all()
    parts = atlas.documents[atlas.documents["subtopic"] >= 0]
    owner = dict(zip(atlas.subtopics["subtopic"], atlas.subtopics["topic"]))
    assert all(owner[part] == topic for part, topic in zip(parts["subtopic"], parts["topic"]))
    cache.check_target(folder)  # an edited atlas is still a folder a rebuild may replace
    return atlas


def test_merge_joins_the_topics_renames_them_and_logs_it(atlas: Path):
    before = cache.read_cache(atlas)
    first, second = largest_topics(atlas, 2)
    entry = edit.merge_topics(atlas, [second, first], by="tester")
    after = assert_consistent(atlas, set(before.documents["doc_id"].astype(str)))
    old_sizes = sizes_of(before)
    assert sizes_of(after)[first] == old_sizes[first] + old_sizes[second] and second not in sizes_of(after)
    merged = after.topics.set_index("topic").loc[first]
    assert merged["top_terms"] and len(merged["representative_doc_ids"]) == 5
    assert after.manifest["metrics_stale"]["since_edit"] == entry["id"] == 1
    assert "npmi" in after.manifest["metrics_stale"]["metrics"]
    logged = read_log(atlas)
    assert [item["op"] for item in logged] == ["merge"] and logged[0]["by"] == "tester"
    params = logged[0]["params"]
    assert params["topics"] == sorted([first, second]) and params["into"] == first
    kept = {int(topic): set(ids) for topic, ids in params["papers"].items()}  # for a replay after a rebuild
    assert kept == {
        topic: set(before.documents.loc[before.documents["topic"] == topic, "doc_id"]) for topic in (first, second)
    }


def test_split_cuts_a_topic_into_k_new_named_topics_of_its_theme(atlas: Path):
    before = cache.read_cache(atlas)
    topic = largest_topics(atlas, 1)[0]
    used = set(before.manifest["topic_ids_ever_used"])
    entry = edit.split_topic(atlas, topic, 3)
    after = assert_consistent(atlas, set(before.documents["doc_id"].astype(str)))
    parts = entry["params"]["into"]
    assert parts[0] == topic and len(parts) == 3 and not set(parts[1:]) & used
    assert sum(sizes_of(after)[part] for part in parts) == sizes_of(before)[topic]
    themes = after.topics.set_index("topic")["theme"]
    assert {int(themes[part]) for part in parts} == {int(before.topics.set_index("topic").loc[topic, "theme"])}
    assert set(parts[1:]) <= set(after.manifest["topic_ids_ever_used"])


def test_delete_makes_outliers_or_moves_papers_to_their_nearest_topics(atlas: Path):
    before = cache.read_cache(atlas)
    topic = largest_topics(atlas, 3)[-1]
    members = set(before.documents.loc[before.documents["topic"] == topic, "doc_id"])
    edit.delete_topic(atlas, topic)
    after = assert_consistent(atlas, set(before.documents["doc_id"].astype(str)))
    moved = after.documents[after.documents["doc_id"].isin(members)]
    assert (moved["topic"] == -1).all() and (moved["outlier_reason"] == edit.REMOVED_BY_EDIT).all()
    assert sizes_of(after)[-1] == sizes_of(before).get(-1, 0) + len(members)
    edit.undo(atlas)
    edit.delete_topic(atlas, topic, to_nearest=True)
    after = assert_consistent(atlas, set(before.documents["doc_id"].astype(str)))
    moved = after.documents[after.documents["doc_id"].isin(members)]
    assert (moved["topic"] >= 0).all() and topic not in set(after.documents["topic"])
    assert sizes_of(after).get(-1, 0) == sizes_of(before).get(-1, 0)


def test_move_puts_papers_into_a_topic_and_renames_and_undo_restores_the_bytes(atlas: Path):
    before = cache.read_cache(atlas)
    original = (atlas / cache.DOCUMENTS_FILE).read_bytes()
    source, target = largest_topics(atlas, 2)
    ids = before.documents.loc[before.documents["topic"] == source, "doc_id"].astype(str).head(4).tolist()
    edit.move_papers(atlas, ids, target)
    after = assert_consistent(atlas, set(before.documents["doc_id"].astype(str)))
    assert set(after.documents.loc[after.documents["doc_id"].isin(ids), "topic"]) == {target}
    assert sizes_of(after)[source] == sizes_of(before)[source] - 4
    theme = int(after.topics.loc[after.topics["topic"] == target, "theme"].iloc[0])
    edit.rename(atlas, "theme", theme, "My own theme")
    edit.rename(atlas, "topic", target, "My own topic")
    renamed = cache.read_cache(atlas)
    assert set(renamed.topics.loc[renamed.topics["theme"] == theme, "theme_label"]) <= {"My own theme", "My own topic"}
    assert renamed.manifest["label_overrides"][str(target)]["label"] == "My own topic"
    if not renamed.subtopics.empty:
        part = int(renamed.subtopics["subtopic"].iloc[0])
        edit.rename(atlas, "subtopic", part, "My own part")
        assert "My own part" in set(cache.read_cache(atlas).subtopics["label"])
    for _ in [entry for entry in read_log(atlas) if entry["op"] != "undo"]:
        edit.undo(atlas)
    assert (atlas / cache.DOCUMENTS_FILE).read_bytes() == original
    np.testing.assert_array_equal(cache.read_cache(atlas).documents["topic"], before.documents["topic"])
    with pytest.raises(InputError, match="no edit to undo"):
        edit.undo(atlas)


def test_bad_edits_are_refused_in_one_line_and_write_nothing(atlas: Path):
    before = (atlas / cache.MANIFEST_FILE).read_bytes()
    topic = largest_topics(atlas, 1)[0]
    size = sizes(atlas)[topic]
    cases = [
        (lambda: edit.merge_topics(atlas, [topic]), "two or more different topics"),
        (lambda: edit.merge_topics(atlas, [topic, 999]), "has no topic 999"),
        (lambda: edit.split_topic(atlas, topic, size + 1), f"has {size} papers; it cannot be split into {size + 1}"),
        (lambda: edit.split_topic(atlas, topic, 1), "k of 2 or more"),
        (lambda: edit.delete_topic(atlas, -1), "outlier topic -1"),
        (lambda: edit.move_papers(atlas, ["no-such-paper"], topic), "has no paper no-such-paper"),
        (lambda: edit.rename(atlas, "theme", 999, "x"), "has no theme 999"),
        (lambda: edit.undo(atlas), "no edit to undo"),
    ]
    for call, message in cases:
        with pytest.raises(InputError, match=message) as error:
            call()
        assert "\n" not in str(error.value)
    assert (atlas / cache.MANIFEST_FILE).read_bytes() == before and not (atlas / EDITS_FILE).exists()


def test_two_sessions_editing_at_once_both_land(atlas: Path):
    first, second, third, fourth = largest_topics(atlas, 4)
    errors: list[BaseException] = []

    def merge(pair: list[int]) -> None:
        try:
            edit.merge_topics(atlas, pair)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            errors.append(error)

    threads = [threading.Thread(target=merge, args=(pair,)) for pair in ([first, second], [third, fourth])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(entry["op"] for entry in read_log(atlas)) == ["merge", "merge"]
    present = set(sizes(atlas))
    assert {first, third} <= present and not {second, fourth} & present


def test_a_second_writer_gets_the_lock_message_and_the_command_line_edits(atlas: Path):
    topics = largest_topics(atlas, 2)
    command = [sys.executable, "-m", "topic_atlas", "edit", "merge", "--cache", str(atlas), "--topics"]
    command += [str(topic) for topic in topics]
    environment = {**os.environ, "PYTHONPATH": str(REPO), "ATLAS_LOCK_WAIT_S": "1"}
    with cache.writer_lock(atlas):
        refused = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert f"is being written by pid {os.getpid()}" in refused.stderr and "waited 1 s" in refused.stderr
    assert not (atlas / EDITS_FILE).exists()
    done = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"merged topics {min(topics)}, {max(topics)} into topic {topics[0]}" in done.stdout
    with pytest.raises(TargetError, match="no cache folder"):
        edit.merge_topics(atlas.parent / "missing", topics)


def test_a_log_replayed_on_another_copy_makes_the_same_atlas_and_says_what_no_longer_applies(
    atlas: Path, tmp_path: Path
):
    other = tmp_path / "other"
    shutil.copytree(atlas, other)
    first, second, third = largest_topics(atlas, 3)
    edit.merge_topics(atlas, [second, third])
    edit.split_topic(atlas, first, 2)
    edit.rename(atlas, "topic", second, "A merged topic")
    edit.delete_topic(atlas, first)
    edit.undo(atlas)  # the delete is undone: not replayed
    reports = replay_edits(other, read_log(atlas), by="replayer")
    assert [(report["op"], report["status"]) for report in reports] == [
        ("merge", "applied"),
        ("split", "applied"),
        ("rename", "applied"),
    ]
    np.testing.assert_array_equal(
        cache.read_cache(other).documents["topic"], cache.read_cache(atlas).documents["topic"]
    )
    assert {entry["by"] for entry in read_log(other)} == {"replayer"}
    again = replay_edits(other, read_log(atlas))
    assert [report["status"] for report in again] == ["already so"] * 3  # a replay is idempotent
    edit.delete_topic(other, second)
    gone = replay_edits(other, read_log(atlas))
    assert [report["status"] for report in gone] == ["no longer applies", "already so", "no longer applies"]
    assert "in no one topic now" in gone[0]["note"]


def test_the_python_api_edits_and_reads_the_atlas_again(atlas: Path):
    import topic_atlas as ta

    loaded = ta.Atlas.load(atlas)
    first, second = largest_topics(atlas, 2)
    entry = loaded.merge([first, second], by="api")
    assert second not in set(loaded.topics["topic"]) and entry["op"] == "merge"
    loaded.split(first, 2)
    assert len(loaded.topics) == len(cache.read_cache(atlas).topics)
    log = loaded.edits()
    assert log["op"].tolist() == ["merge", "split"] and log["by"].iloc[0] == "api" and not log["undone"].any()
    loaded.undo()
    loaded.undo()
    assert second in set(loaded.topics["topic"]) and len(loaded.topics) == len(cache.read_cache(atlas).topics)
    assert loaded.edits()["undone"].tolist() == [True, True, False, False]


def test_undo_reaches_back_as_far_as_the_files_kept(atlas: Path, monkeypatch: pytest.MonkeyPatch):
    from pipeline.operations import edit_log

    monkeypatch.setattr(edit_log, "UNDO_DEPTH", 2)
    topic = largest_topics(atlas, 1)[0]
    for number in range(3):
        edit.rename(atlas, "topic", topic, f"Label {number}")
    kept = sorted(path.name.partition("-")[0] for path in (atlas / edit_log.EDITS_DIR).iterdir())
    assert set(kept) == {"2", "3"}  # the first edit's files are gone
    edit.undo(atlas)
    edit.undo(atlas)
    assert cache.read_cache(atlas).topics.set_index("topic").loc[topic, "label"] == "Label 0"
    with pytest.raises(InputError, match="edit 1 is too old to undo"):
        edit.undo(atlas)


def test_a_rebuild_replays_the_edits_of_the_atlas_it_replaces(
    atlas: Path, papers_slice: Path, embedding_store: Path, encoder, caplog: pytest.LogCaptureFixture
):
    from pipeline.operations.build import run_build

    _, second, third = largest_topics(atlas, 3)
    before = cache.read_cache(atlas).documents
    merged = set(before.loc[before["topic"].isin([second, third]), "doc_id"])
    edit.merge_topics(atlas, [second, third])
    with caplog.at_level("INFO", logger="pipeline.operations.build"):
        run_build(papers_slice, atlas, embedding_store=embedding_store, encoder=encoder)
    assert [entry["op"] for entry in read_log(atlas)] == ["merge"]  # made again, logged anew
    assert any("replayed: applied" in record.getMessage() for record in caplog.records)
    documents = cache.read_cache(atlas).documents
    holders = documents[documents["doc_id"].isin(merged)]["topic"].value_counts()
    assert holders.iloc[0] >= 0.8 * len(merged)  # the merged papers are one topic again


def test_a_split_without_k_clusters_the_topic_again_as_the_build_cuts_subtopics(atlas: Path):
    from pipeline.topics.subtopics import subtopic_count

    (first,) = largest_topics(atlas, 1)
    papers = int((cache.read_cache(atlas).documents["topic"] == first).sum())
    before = set(sizes(atlas))
    entry = edit.split_topic(atlas, first)
    after = set(sizes(atlas))
    expected = max(subtopic_count(papers), 2)  # a topic too small for subtopics splits in two
    assert len(after - before) + (first in after) == expected  # the topic's parts, one keeps its id
    assert entry["op"] == "split"
