"""Subtopics (pipeline.topics.subtopics): how many a topic gets, the cut (strays dissolved, ids unique), names
against siblings, and a real build's subtopics.parquet read back by pipeline.cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.cache import SUBTOPIC_COLUMNS, read_cache
from pipeline.topics.naming.phrase_counts import count_phrases
from pipeline.topics.subtopics import (
    MAX_SUBTOPICS,
    MIN_TOPIC_PAPERS,
    cut_subtopics,
    cut_topic,
    name_subtopics,
    smallest_part,
    subtopic_count,
    subtopic_table,
)


def test_subtopic_count_grows_with_the_topic_within_bounds():
    assert subtopic_count(MIN_TOPIC_PAPERS - 1) == 0
    counts = [subtopic_count(papers) for papers in (MIN_TOPIC_PAPERS, 200, 500, 5000)]
    assert counts == sorted(counts) and counts[0] >= 3 and counts[-1] == MAX_SUBTOPICS


def blobs(sizes: list[int], seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Papers in groups of ``sizes``, each group apart in the vectors and on the map: (vectors, points, group)."""
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(len(sizes)), sizes)
    vectors = np.eye(max(len(sizes), 2))[group] + 0.05 * rng.normal(size=(len(group), max(len(sizes), 2)))
    points = 10.0 * np.stack([np.cos(group), np.sin(group)], axis=1) + rng.normal(size=(len(group), 2))
    return vectors, points, group


def test_cut_topic_finds_the_parts_and_dissolves_strays():
    vectors, points, group = blobs([50, 40, 30])
    strays = np.array([[0.0, 0.0, 1.0]] * 2)  # two papers far from every part, in the vectors and on the map
    vectors, points = np.vstack([vectors, strays]), np.vstack([points, [[80.0, 80.0]] * 2])
    parts = cut_topic(vectors, points, 4, seed=0)
    assert len(set(parts.tolist())) == 3  # the fourth part, the strays, was dissolved
    assert np.bincount(parts).min() >= smallest_part(len(parts))
    assert [len(set(parts[:120][group == g].tolist())) for g in range(3)] == [1, 1, 1]
    assert parts[0] == 0 and parts[50] == 1  # numbered by papers, most first


def test_cut_subtopics_gives_unique_ids_and_leaves_small_topics_and_outliers_out():
    vectors, points, group = blobs([60, 50, 40])
    topics = np.concatenate([np.full(150, 4), np.full(20, 9), np.full(5, -1)])
    vectors = np.vstack([vectors, np.ones((25, 3))])
    points = np.vstack([points, np.zeros((25, 2))])
    parts = cut_subtopics(topics, vectors, points, seed=1)
    assert (parts[150:] == -1).all()  # a topic of 20 papers, the outliers
    assert sorted(set(parts[:150].tolist())) == list(range(len(set(parts[:150].tolist()))))
    again = cut_subtopics(topics, vectors, points, seed=1)
    assert np.array_equal(parts, again)


def test_topics_cut_in_two_threads_get_the_ids_one_thread_gives():
    rng = np.random.default_rng(3)
    sizes = [90, 150, 70, 120]  # four topics with subtopics, in an order the threads finish differently
    topics = np.repeat([7, 2, 5, 11], sizes)
    vectors = rng.normal(size=(sum(sizes), 8)) + topics[:, None]
    points = rng.normal(size=(sum(sizes), 2))
    alone = cut_subtopics(topics, vectors, points, seed=0, threads=1)
    assert len(set(alone.tolist())) > 8  # every topic was cut
    assert np.array_equal(cut_subtopics(topics, vectors, points, seed=0, threads=2), alone)


def test_subtopics_are_named_against_their_siblings_never_as_their_topic():
    titles = (
        [f"Offline reinforcement learning from logged data {i}" for i in range(12)]
        + [f"Multi-agent reinforcement learning in games {i}" for i in range(12)]
        + [f"Graph neural networks for molecules {i}" for i in range(80)]  # another topic: the rest of the corpus
    )
    texts = [f"{title}. We report results on benchmarks." for title in titles]
    counts = count_phrases(texts, titles)
    topics = np.repeat([0, 1], [24, 80])
    parts = np.concatenate([np.repeat([0, 1], 12), np.full(80, -1)])
    names = name_subtopics(counts, topics, parts, {0: "Reinforcement learning (RL)", 1: "Graph neural networks"})
    assert "offline" in names[0][0].lower() and "multi-agent" in names[1][0].lower()
    assert all(name.casefold() != "reinforcement learning (rl)" for name, _ in names.values())
    table = subtopic_table(parts, topics, np.zeros((len(parts), 2)), names)
    assert list(table.columns) == SUBTOPIC_COLUMNS and table["size"].tolist() == [12, 12]


def test_a_build_writes_subtopics_that_match_its_papers(slice_cache: Path):
    atlas = read_cache(slice_cache)
    documents, subtopics = atlas.documents, atlas.subtopics
    assert "subtopic" in documents and list(subtopics.columns) == SUBTOPIC_COLUMNS
    sizes = documents.loc[documents["subtopic"] >= 0].groupby("subtopic").size()
    assert sizes.to_dict() == dict(zip(subtopics["subtopic"], subtopics["size"]))
    topic_of = documents.loc[documents["subtopic"] >= 0].groupby("subtopic")["topic"].agg(set)
    assert all(topic_of[part] == {topic} for part, topic in zip(subtopics["subtopic"], subtopics["topic"]))
    per_topic = documents.loc[documents["topic"] >= 0].groupby("topic")
    for topic, papers in per_topic:
        held = subtopics.loc[subtopics["topic"] == topic]
        assert len(held) == 0 or 2 <= len(held) <= MAX_SUBTOPICS, topic
        assert len(held) == 0 or (papers["subtopic"] >= 0).all()
    assert (documents.loc[documents["topic"] == -1, "subtopic"] == -1).all()
    assert subtopics["label"].str.len().gt(0).all()


def test_a_cache_without_subtopics_reads_as_none(slice_cache: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "old"
    shutil.copytree(slice_cache, copy)
    (copy / "subtopics.parquet").unlink(missing_ok=True)
    atlas = read_cache(copy)
    assert atlas.subtopics.empty and list(atlas.subtopics.columns) == SUBTOPIC_COLUMNS
    assert isinstance(atlas.subtopics, pd.DataFrame)


def test_a_subtopic_is_never_named_by_a_phrase_few_of_its_papers_write():
    """A phrase in the title of 2 of a part's 30 papers (under MIN_NAME_COVERAGE) outscored the part's shared
    phrase on title weight and precision alone; it no longer names the part."""
    from pipeline.topics.subtopics import MIN_NAME_COVERAGE

    titles = (
        [f"Neural radiance fields for novel view synthesis {i}" for i in range(2)]
        + [f"Point cloud completion with transformers {i}" for i in range(28)]
        + [f"Point cloud and mesh reconstruction of scenes {i}" for i in range(30)]
        + [f"Graph neural networks for molecules {i}" for i in range(80)]
    )
    texts = [f"{title}. We report results on benchmarks." for title in titles]
    counts = count_phrases(texts, titles)
    topics = np.repeat([0, 1], [60, 80])
    parts = np.concatenate([np.repeat([0, 1], 30), np.full(80, -1)])
    assert 2 / 30 < MIN_NAME_COVERAGE
    names = name_subtopics(counts, topics, parts, {0: "3D vision", 1: "Graph neural networks"})
    assert "radiance" not in names[0][0].lower(), names


def test_a_subtopic_is_named_by_what_most_of_its_papers_write_not_by_a_rarer_exact_phrase():
    """A third of a part writes "segment anything model", only there; most of it writes "image segmentation", which
    the other part writes too. Ranked by precision (PRECISION_POWER 1) the rarer phrase named the part, and readers
    marked such names too narrow (round 45); at 0.5 the phrase most of the part writes names it."""
    from pipeline.topics.subtopics import PRECISION_POWER

    titles = (
        [f"Segment anything model for image segmentation {i}" for i in range(10)]
        + [f"Image segmentation {i}" for i in range(15)]
        + [f"Scene understanding {i}" for i in range(5)]
        + [f"Image segmentation for scene understanding {i}" for i in range(14)]
        + [f"Scene understanding {i}" for i in range(16)]
        + [f"Graph neural networks for molecules {i}" for i in range(400)]
    )
    counts = count_phrases([f"{title}. We report results on benchmarks." for title in titles], titles)
    topics = np.repeat([0, 1], [60, 400])  # a phrase of 12% of the corpus names no part
    parts = np.concatenate([np.repeat([0, 1], 30), np.full(400, -1)])
    names = name_subtopics(counts, topics, parts, {0: "Computer vision", 1: "Graph neural networks"})
    assert PRECISION_POWER < 1
    assert names[0][0].lower().startswith("image segmentation"), names
