"""Themes (pipeline.topics.themes): the build's Ward cut of the topics' centroids and map positions, and the
hierarchy's cut for caches built before themes (tree reading, the cut, names, odd topic ids)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.cache import HIERARCHY_COLUMNS
from pipeline.topics.themes import (
    OUTLIER_THEME,
    assign_cut_themes,
    assign_themes,
    combined_features,
    cut_themes,
    cut_tree,
    has_themes,
    merge_tree,
    theme_count,
    theme_name,
)


def hierarchy_of(merges: list[tuple[int, int, int, list[int], float]]) -> pd.DataFrame:
    """A hierarchy table from (parent id, left id, right id, topics below, distance) rows."""
    rows = [
        {
            "parent_id": parent,
            "parent_name": "",
            "child_left_id": left,
            "child_left_name": "",
            "child_right_id": right,
            "child_right_name": "",
            "distance": distance,
            "topics": topics,
        }
        for parent, left, right, topics, distance in merges
    ]
    return pd.DataFrame(rows, columns=HIERARCHY_COLUMNS)


def topics_of(sizes: dict[int, int], labels: dict[int, str] | None = None) -> pd.DataFrame:
    labels = labels or {topic: f"term{topic}, more{topic}" for topic in sizes}
    return pd.DataFrame(
        {"topic": list(sizes), "label": [labels[topic] for topic in sizes], "size": list(sizes.values())}
    )


# Six topics with ids that are neither contiguous nor below the merged nodes' ids: merged node 7 is also a topic id.
SIZES = {-1: 50, 3: 100, 7: 80, 12: 60, 40: 300, 41: 20, 90: 25}
TREE = hierarchy_of(
    [
        (95, 93, 94, [3, 7, 12, 40, 41, 90], 0.9),
        (94, 40, 92, [40, 41, 90], 0.6),
        (93, 7, 91, [3, 7, 12], 0.7),
        (92, 41, 90, [41, 90], 0.3),
        (91, 3, 12, [3, 12], 0.2),
    ]
)


def test_merge_tree_reads_children_from_topic_sets_not_ids():
    tree = merge_tree(TREE)
    assert set(tree) == {
        frozenset({3, 7, 12, 40, 41, 90}),
        frozenset({40, 41, 90}),
        frozenset({3, 7, 12}),
        frozenset({41, 90}),
        frozenset({3, 12}),
    }
    assert set(tree[frozenset({3, 7, 12})].children) == {frozenset({7}), frozenset({3, 12})}
    assert merge_tree(pd.DataFrame(columns=HIERARCHY_COLUMNS)) == {}


def test_a_table_that_is_not_a_merge_tree_is_refused():
    broken = hierarchy_of([(9, 1, 2, [1, 2, 3], 0.5)])  # three topics under one binary merge
    with pytest.raises(ValueError, match="3 children"):
        merge_tree(broken)


def test_the_cut_splits_the_theme_with_the_most_papers_first():
    tree = merge_tree(TREE)
    sizes = {topic: size for topic, size in SIZES.items() if topic != -1}
    assert sorted(map(sorted, cut_tree(tree, sizes, 2))) == [[3, 7, 12], [40, 41, 90]]
    # {40, 41, 90} holds 345 papers, {3, 7, 12} 240: the former is split next, though its merge distance is smaller
    assert sorted(map(sorted, cut_tree(tree, sizes, 3))) == [[3, 7, 12], [40], [41, 90]]
    assert len(cut_tree(tree, sizes, 50)) == 6  # never more themes than topics
    assert sorted(map(sorted, cut_tree({}, sizes, 3))) == [[3], [7], [12], [40], [41], [90]]


def test_assign_themes_numbers_by_papers_keeps_rows_and_names_uniquely():
    topics = topics_of(SIZES)
    themed = assign_themes(topics, TREE, n_themes=3)
    assert themed["topic"].tolist() == topics["topic"].tolist()
    theme_of = dict(zip(themed["topic"], themed["theme"]))
    assert theme_of[-1] == OUTLIER_THEME
    assert theme_of[40] == 0  # 300 papers, then {3, 7, 12} with 240, then {41, 90} with 45
    assert theme_of[3] == theme_of[7] == theme_of[12] == 1
    assert theme_of[41] == theme_of[90] == 2
    names = dict(zip(themed["theme"], themed["theme_label"]))
    assert names[0] == "term40, more40"  # one topic: its own label
    assert names[1] == "term3, term7, term12"  # the first term of each topic, largest first
    assert names[-1] == "Outliers"
    assert themed["theme"].dtype == "int64"
    assert has_themes(themed) and not has_themes(topics)


def test_names_never_repeat_a_term_and_duplicates_get_another_term():
    assert theme_name([("LLMs, reasoning", 10), ("llms, agents", 8), ("RAG, retrieval", 5)]) == "LLMs, RAG"
    topics = topics_of({0: 10, 1: 9, 2: 8, 3: 7}, {0: "a, x", 1: "b, y", 2: "a, z", 3: "b, w"})
    tree = hierarchy_of([(6, 4, 5, [0, 1, 2, 3], 0.9), (4, 0, 1, [0, 1], 0.5), (5, 2, 3, [2, 3], 0.4)])
    names = assign_themes(topics, tree, n_themes=2)["theme_label"]
    assert names.nunique() == 2 and set(names) == {"a, b", "a, b (2)"}


@pytest.mark.parametrize(
    ("n_topics", "expected"), [(0, 0), (1, 1), (2, 1), (5, 3), (12, 6), (30, 10), (45, 15), (60, 20), (90, 20)]
)
def test_theme_count_is_about_ten_to_twenty(n_topics, expected):
    assert theme_count(n_topics) == expected


def test_a_cache_without_a_hierarchy_gets_one_theme_per_topic():
    themed = assign_themes(topics_of({-1: 3, 0: 10}), pd.DataFrame(columns=HIERARCHY_COLUMNS))
    assert dict(zip(themed["topic"], themed["theme"])) == {-1: -1, 0: 0}
    assert themed["theme_label"].tolist() == ["Outliers", "term0, more0"]


def test_a_build_by_map_writes_themes_cut_from_its_topics_place(build_cache, papers_slice):
    """With theme_grouping "map" the build's themes are the Ward cut of its topics' centroids and map positions
    (recomputed here from the cache's own papers, vectors and map), not the hierarchy's cut, which stays for caches
    built before themes."""
    from pipeline.cache import read_cache
    from pipeline.config import BuildConfig

    atlas = read_cache(build_cache(papers_slice, "slice300-map", config=BuildConfig(theme_grouping="map")))
    topics = atlas.topics
    assert has_themes(topics)
    real = topics[topics["topic"] != -1]
    assert (real["theme"] >= 0).all() and (topics.loc[topics["topic"] == -1, "theme"] == OUTLIER_THEME).all()
    assert real["theme"].nunique() == theme_count(len(real))
    assert (
        real.groupby("theme")["theme_label"].nunique().eq(1).all()
        and real.drop_duplicates("theme")["theme_label"].is_unique
    )
    documents = atlas.documents
    recomputed = assign_cut_themes(
        topics.drop(columns=["theme", "theme_label"]),
        documents["topic"].to_numpy(),
        atlas.embeddings(),
        documents[["x", "y"]].to_numpy(),
    )
    assert recomputed["theme"].tolist() == topics["theme"].tolist()
    older = assign_themes(topics.drop(columns=["theme", "theme_label"]), atlas.hierarchy)  # a cache without themes
    assert older.loc[older["topic"] != -1, "theme"].nunique() == theme_count(len(real))


def test_cut_themes_groups_topics_that_lie_together_in_both_blocks():
    """Nine topics in three groups, each group near in the representation and on the map: the cut finds the groups,
    numbered by papers; the size guard splits a group that would hold most papers."""
    rng = np.random.default_rng(0)
    centres = np.eye(3)
    vectors = np.vstack([centres[group] + 0.05 * rng.normal(size=3) for group in range(3) for _ in range(3)])
    positions = np.vstack([10.0 * centres[group, :2] + rng.normal(size=2) for group in range(3) for _ in range(3)])
    sizes = np.array([5, 5, 5, 20, 20, 20, 9, 9, 9])
    themes = cut_themes(combined_features(vectors, positions), sizes, 3, cap=1.0)
    assert [set(np.flatnonzero(themes == theme)) for theme in range(3)] == [{3, 4, 5}, {6, 7, 8}, {0, 1, 2}]
    guarded = cut_themes(combined_features(vectors, positions), sizes, 3, cap=0.3)
    assert max(sizes[guarded == theme].sum() for theme in range(3)) <= 0.3 * sizes.sum() + max(sizes)
    assert len(set(guarded.tolist())) == 3


def test_assign_cut_themes_numbers_by_papers_and_keeps_outliers_apart():
    topics = topics_of({-1: 2, 0: 3, 1: 3, 2: 4, 3: 4}, {-1: "Outliers", 0: "A", 1: "B", 2: "C", 3: "D"})
    papers = np.array([-1, -1, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])[[0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]]
    points = np.where(papers[:, None] >= 2, 5.0, 0.0) + np.arange(16)[:, None] * 0.01
    themed = assign_cut_themes(topics, papers, vectors, points, n_themes=2)
    theme_of = dict(zip(themed["topic"], themed["theme"]))
    assert theme_of[-1] == OUTLIER_THEME and theme_of[0] == theme_of[1] and theme_of[2] == theme_of[3]
    assert theme_of[2] == 0  # 8 papers against 6
    assert themed["topic"].tolist() == topics["topic"].tolist()


def test_leaf_order_keeps_each_subtree_together():
    from pipeline.topics.themes import leaf_order

    assert leaf_order(TREE, [90, 41, 40, 12, 7, 3, -1, 5]) == [3, 12, 7, 41, 90, 40, 5]
