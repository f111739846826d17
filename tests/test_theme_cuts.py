"""bench.theme_cuts: other cuts of the topics into themes (the representation's, the map's, both), on constructed
topics whose groups are known, the size guard, and the command on a real 300-paper atlas."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench.theme_cuts import (
    RANDOM,
    TODAY,
    TOPICS,
    clustered_cuts,
    cut_names,
    cut_topics,
    main,
    map_centroids,
    measure_cuts,
    prepare,
    table,
    topic_linkage,
    with_themes,
)
from pipeline.cache import read_cache
from pipeline.topics.themes import combined_features, guarded_cut, numbered, standardised

GROUPS = 3
TOPICS_PER_GROUP = 3
PAPERS_PER_TOPIC = 20


def partition(themes: np.ndarray, ids: np.ndarray | list[int] | None = None) -> set[frozenset[int]]:
    """The grouping of topics ``themes`` (a theme per topic) as a set of topic sets (ids default 0..t-1)."""
    ids = np.arange(len(themes)) if ids is None else np.asarray(ids)
    return {frozenset(int(topic) for topic in ids[themes == theme]) for theme in np.unique(themes)}


def three_groups(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(documents, topics, embeddings) of 9 topics in 3 groups, far apart both in the vectors (group g's topics
    near the unit vector e_g of 6 dimensions) and on the map (group g near (30 g, 0)), 20 papers per topic, 10
    outliers; today's themes put each topic's group in one theme except that they mix groups 0 and 1."""
    rng = np.random.default_rng(seed)
    rows, vectors = [], []
    for topic in range(GROUPS * TOPICS_PER_GROUP):
        group = topic // TOPICS_PER_GROUP
        topic_vector = np.eye(6)[group] + rng.normal(0, 0.05, 6)
        topic_place = np.array([30.0 * group, 0.0]) + rng.normal(0, 1.5, 2)
        for _ in range(PAPERS_PER_TOPIC):
            x, y = topic_place + rng.normal(0, 0.3, 2)
            rows.append({"topic": topic, "x": x, "y": y, "primary_area": f"area {group}"})
            vectors.append(topic_vector + rng.normal(0, 0.02, 6))
    for _ in range(10):
        rows.append({"topic": -1, "x": rng.uniform(0, 60), "y": rng.uniform(5, 10), "primary_area": None})
        vectors.append(rng.normal(0, 1, 6))
    documents = pd.DataFrame(rows)
    real = list(range(GROUPS * TOPICS_PER_GROUP))
    topics = pd.DataFrame(
        {
            "topic": [-1, *real],
            "label": ["Outliers", *[f"Topic {topic}" for topic in real]],
            "size": [10, *[PAPERS_PER_TOPIC] * len(real)],
            "theme": [-1, 0, 1, 0, 1, 0, 1, 2, 2, 2],
            "theme_label": ["Outliers", "A", "B", "A", "B", "A", "B", "C", "C", "C"],
        }
    )
    return documents, topics, np.array(vectors)


KNOWN_GROUPS = {frozenset(range(g * TOPICS_PER_GROUP, (g + 1) * TOPICS_PER_GROUP)) for g in range(GROUPS)}


# The pieces.


def test_map_centroids_are_the_median_positions_of_real_topics() -> None:
    points = np.array([[0, 0], [1, 0], [100, 0], [5, 5], [9, 9], [7, 7]], dtype=float)
    ids, positions = map_centroids(points, [3, 3, 3, -1, 8, 8])
    assert ids.tolist() == [3, 8]
    assert positions.tolist() == [[1.0, 0.0], [8.0, 8.0]]  # the median, not pulled to 33.7 by the far paper


def test_standardised_blocks_weigh_alike_whatever_their_dimensions() -> None:
    rng = np.random.default_rng(1)
    wide, narrow = rng.normal(0, 5, (12, 40)), rng.normal(3, 0.01, (12, 2))
    for block in (wide, narrow):
        scaled = standardised(block)
        assert np.allclose(scaled.mean(axis=0), 0)
        assert (scaled * scaled).sum(axis=1).mean() == pytest.approx(1.0)
    both = combined_features(wide, narrow)
    assert both.shape == (12, 42)
    assert (both[:, :40] ** 2).sum() == pytest.approx((both[:, 40:] ** 2).sum())
    assert not standardised(np.ones((4, 3))).any()  # no spread: zeros, no division by zero
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an atlas without topics: no "mean of an empty slice"
        assert standardised(np.empty((0, 3))).shape == (0, 3)


def test_numbered_puts_the_most_papers_first() -> None:
    themes = numbered([[0], [1, 2], [3]], [5, 1, 1, 9])
    assert themes.tolist() == [1, 2, 2, 0]  # 9 papers, then 5 (topic 0), then 2 (topics 1, 2)


def test_without_a_guard_the_cut_is_scipys_usual_cut_into_k_clusters() -> None:
    from scipy.cluster.hierarchy import fcluster

    features = np.random.default_rng(2).normal(size=(14, 4))
    sizes = np.arange(1, 15)
    tree = topic_linkage(features)
    for n_themes in range(2, 8):
        ours = guarded_cut(tree, sizes, n_themes, cap=1.0)
        assert len(np.unique(ours)) == n_themes
        assert partition(ours) == partition(fcluster(tree, n_themes, criterion="maxclust"))


def test_the_guard_splits_an_oversized_theme() -> None:
    # Topics 0-3 lie close together and hold 400 of 440 papers; 4-5 and 6-7 are small pairs far away.
    features = np.array([[0.0], [0.1], [0.2], [0.3], [10.0], [10.1], [20.0], [20.1]])
    sizes = np.array([100, 100, 100, 100, 10, 10, 10, 10])
    tree = topic_linkage(features)

    def largest(themes: np.ndarray) -> float:
        return max(sizes[themes == theme].sum() for theme in np.unique(themes)) / sizes.sum()

    unguarded = guarded_cut(tree, sizes, 3, cap=1.0)
    assert partition(unguarded) == {frozenset({0, 1, 2, 3}), frozenset({4, 5}), frozenset({6, 7})}
    guarded = guarded_cut(tree, sizes, 3, cap=0.5)
    assert len(np.unique(guarded)) == 3
    assert largest(guarded) <= 0.5 < largest(unguarded)
    assert frozenset({4, 5, 6, 7}) in partition(guarded)  # the budget went to the big theme; the small pairs join


def test_a_topic_over_the_cap_stays_one_theme_and_the_others_are_still_cut() -> None:
    features = np.array([[0.0], [5.0], [5.1], [8.0]])
    themes = guarded_cut(topic_linkage(features), [1000, 1, 1, 1], 3, cap=0.15)
    assert len(np.unique(themes)) == 3
    assert frozenset({0}) in partition(themes)


def test_cut_topics_at_the_edges() -> None:
    features = np.eye(4)
    assert partition(cut_topics(features, [1, 2, 3, 4], 4)) == {frozenset({i}) for i in range(4)}
    assert partition(cut_topics(features, [1, 2, 3, 4], 9)) == {frozenset({i}) for i in range(4)}
    assert cut_topics(features, [1, 2, 3, 4], 1).tolist() == [0, 0, 0, 0]
    assert cut_topics(np.zeros((0, 4)), [], 3).tolist() == []
    with pytest.raises(ValueError, match="linkage"):
        topic_linkage(features, "single")


def test_with_themes_gives_outliers_and_unknown_topics_no_theme() -> None:
    topics = pd.DataFrame({"topic": [-1, 4, 7, 9], "size": [1, 2, 3, 4], "theme": [-1, 0, 0, 1], "theme_label": "x"})
    table_ = with_themes(topics, np.array([4, 7]), np.array([1, 0]))
    assert table_["theme"].tolist() == [-1, 1, 0, -1]
    assert "theme_label" not in table_
    assert topics["theme"].tolist() == [-1, 0, 0, 1]  # the input is left alone


# The cuts on topics whose groups are known.


def test_every_cut_finds_three_well_separated_groups() -> None:
    documents, topics, embeddings = three_groups()
    atlas = prepare(documents, embeddings)
    for method in ("ward", "average"):
        cuts = clustered_cuts(atlas, topics, GROUPS, method=method)
        assert set(cuts) == set(cut_names(method))
        for name, cut in cuts.items():
            real = cut[cut["topic"] != -1]
            assert partition(real["theme"].to_numpy(), real["topic"].to_numpy()) == KNOWN_GROUPS, (method, name)
            assert cut.loc[cut["topic"] == -1, "theme"].tolist() == [-1]


def test_measure_cuts_scores_every_cut_beside_today_random_and_topics() -> None:
    documents, topics, embeddings = three_groups()
    figures, cuts = measure_cuts(prepare(documents, embeddings), topics, random_repeats=3)
    assert list(figures) == [TODAY, *cut_names(), RANDOM, TOPICS]
    assert list(cuts) == [TODAY, *cut_names()]
    for name in cut_names():
        # The groups found are the true groups: more alike within than today's mixed themes, and than random ones.
        assert figures[name]["centroid_ratio"] > figures[TODAY]["centroid_ratio"] > figures[RANDOM]["centroid_ratio"]
        assert figures[name]["ami_primary_area"] == pytest.approx(1.0)
        assert figures[name]["knn_same"] >= figures[TOPICS]["knn_same"]
        assert figures[name]["groups"] == GROUPS
        assert figures[name]["knn_other_topic"] == pytest.approx(
            figures[name]["knn_same"] - figures[TOPICS]["knn_same"]
        )
    assert "knn_other_topic" not in figures[TOPICS]
    printed = table(figures)
    header = printed.splitlines()[0]
    assert all(column in header for column in figures)
    assert "map: 15-NN in another topic of own theme" in printed
    other_topic_line = next(line for line in printed.splitlines() if "another topic" in line)
    assert other_topic_line.split()[-1] == "-"  # the topics column has no such figure


def test_a_requested_number_of_themes_is_cut() -> None:
    documents, topics, embeddings = three_groups()
    figures, cuts = measure_cuts(prepare(documents, embeddings), topics, n_themes=5, random_repeats=0)
    assert RANDOM not in figures
    assert figures[TODAY]["groups"] == 3
    for name in cut_names():
        assert figures[name]["groups"] == 5
        real = cuts[name][cuts[name]["topic"] != -1]
        assert (real["theme"] >= 0).all()


# The command on a real atlas.

ROW = re.compile(r"^\s*(\d+)\s+([\d,]+)\s+(\d+)\s+(\d+)  (.*)$")


def cut_sections(output: str, names: list[str]) -> dict[str, list[re.Match[str]]]:
    """{cut: its theme rows} of the command's listing of one cache."""
    lines = output.splitlines()
    sections: dict[str, list[re.Match[str]]] = {}
    for name in names:
        start = next(i for i, line in enumerate(lines) if re.fullmatch(rf"{re.escape(name)}: \d+ themes", line))
        rows = []
        for line in lines[start + 2 :]:
            match = ROW.match(line)
            if not match:
                break
            rows.append(match)
        sections[name] = rows
    return sections


@pytest.mark.slow
def test_the_command_prints_every_cut_and_every_cut_places_every_topic(
    slice_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["theme_cuts", "--cache", str(slice_cache), "--random", "3"])
    main()
    output = capsys.readouterr().out
    cache = read_cache(slice_cache)
    real = cache.topics[cache.topics["topic"] != -1]
    names = [TODAY, *cut_names()]
    header = next(line for line in output.splitlines() if line.startswith("measure"))
    assert header.split()[1:] == ["today", *cut_names(), "random", "themes", "topics"]
    sections = cut_sections(output, names)
    for name, rows in sections.items():
        assert [int(row.group(1)) for row in rows] == list(range(len(rows))), name
        assert sum(int(row.group(3)) for row in rows) == len(real), name
        listed = " ".join(row.group(5) for row in rows)
        for label, size in zip(real["label"], real["size"]):
            assert f"{label} ({int(size)})" in listed, (name, label)
    today_themes = real["theme"].nunique()
    assert all(len(rows) == today_themes for rows in sections.values())
    # The same promise from the functions: every real topic of every cut has a theme.
    atlas = prepare(cache.documents, cache.embeddings())
    for name, cut in clustered_cuts(atlas, cache.topics, today_themes).items():
        assert (cut.loc[cut["topic"] != -1, "theme"] >= 0).all(), name
