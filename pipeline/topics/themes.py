"""Themes: the top level of the topic map, grouped from the topics' place in the representation and on the map.

A **theme** is a group of topics. The build groups them by agglomerative clustering (Ward 1963, scipy's
``linkage``; Müllner 2011's algorithms) of one row per topic: its centroid in the document representation (the
unit-length mean of its papers' unit vectors) beside its map position (the median x, y of its papers), each block
centred and scaled to a total variance of 1 (:func:`standardised`), so the 2 map columns weigh as much as the
representation's hundreds: topics a reader would put in one session, and that sit together on the map
(docs/decisions/theme-measures.md, section 4 and 5: within/between 1.43 against 1.27 for BERTopic's c-TF-IDF tree on
ICLR 2025, the map's 15-NN share 0.863 against 0.856, 8 themes in 2+ map regions against 10). The tree is cut by
:func:`guarded_cut` (the **size guard**: a theme of more than SHARE_CAP of the papers is split first, else the highest
merge) into :func:`theme_count` themes (:func:`cut_themes`, :func:`assign_cut_themes`).

Caches built before (without theme columns) get themes from BERTopic's ``hierarchical_topics`` (the cache's
``hierarchy.parquet``, see :mod:`pipeline.cache`), a binary merge tree over the topics whose nodes list every topic
below them at a ``distance`` (the linkage of the topics' c-TF-IDF vectors): :func:`assign_themes` cuts it by
splitting, from the root down, the theme that holds the most papers (:func:`cut_tree`). The dashboard reads no
centroids, so that cut stays for them. The tree is read through the ``topics`` lists only, never through node ids:
topic ids may be any integers (a rebuild can keep old ids), so a merged node's id may equal a topic id.

Numpy, pandas and scipy only, so the dashboard imports this module too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.schema import OUTLIER_TOPIC

OUTLIER_THEME = -1
OUTLIER_LABEL = "Outliers"
THEME_COLUMNS = ("theme", "theme_label")

# About 10-20 themes: a third of the topics (30 topics -> 10 themes, 60 -> 20), never more than half of them, so a
# theme holds two topics on average even in a small corpus. Chosen so that the ICLR 2025 builds (30-60 topics)
# get 10-20 themes, the range the map's labels were designed for (issue 12).
TOPICS_PER_THEME = 3
MIN_THEMES = 10
MAX_THEMES = 20
# A theme is named by the first term of each of its largest topics' labels (up to this many terms).
THEME_NAME_TERMS = 3
# The size guard: no theme over this share of the papers in topics, where splitting can achieve it (section 4 of
# docs/decisions/theme-measures.md: every cut of ICLR 2024 and 2025 then ends under 15%).
SHARE_CAP = 0.15


@dataclass(frozen=True)
class MergeNode:
    """One merge of the topic hierarchy: the topics below it, its linkage distance and its two children.

    ``children`` are the topic sets of the two merged nodes (a single topic is a one-element set).
    """

    topics: frozenset[int]
    distance: float
    children: tuple[frozenset[int], frozenset[int]]


def merge_tree(hierarchy: pd.DataFrame) -> dict[frozenset[int], MergeNode]:
    """The merge tree of a hierarchy table, keyed by each merged node's set of topics.

    ``hierarchy`` needs columns ``topics`` (list of topic ids below the parent) and ``distance``. A node's children
    are the largest other nodes (or single topics) inside it, found from the topic sets alone. Returns {} for an
    empty table. Raises ValueError when a node's children do not split its topics in two (not a merge tree).
    """
    if hierarchy is None or hierarchy.empty:
        return {}
    distances: dict[frozenset[int], float] = {}
    for members, distance in zip(hierarchy["topics"], hierarchy["distance"]):
        distances[frozenset(int(topic) for topic in members)] = float(distance)
    # A node's children are the maximal proper subsets of it among the nodes, plus the single topics left over.
    ordered = sorted(distances, key=len)
    tree: dict[frozenset[int], MergeNode] = {}
    for node in ordered:
        inside = [other for other in ordered if len(other) < len(node) and other <= node]
        maximal = [other for other in inside if not any(other < bigger for bigger in inside)]
        covered = frozenset().union(*maximal) if maximal else frozenset()
        children = maximal + [frozenset([topic]) for topic in sorted(node - covered)]
        if len(children) != 2:
            raise ValueError(f"hierarchy node over topics {sorted(node)} has {len(children)} children, not 2")
        children.sort(key=lambda child: (-len(child), min(child)))
        tree[node] = MergeNode(node, distances[node], (children[0], children[1]))
    return tree


def theme_count(n_topics: int) -> int:
    """How many themes to cut ``n_topics`` topics into: n/3 within [10, 20], at most half the topics (at least 1)."""
    if n_topics <= 1:
        return max(n_topics, 0)
    wanted = min(max(round(n_topics / TOPICS_PER_THEME), MIN_THEMES), MAX_THEMES)
    return max(1, min(wanted, math.ceil(n_topics / 2)))


def cut_tree(tree: Mapping[frozenset[int], MergeNode], sizes: Mapping[int, int], n_themes: int) -> list[frozenset[int]]:
    """Cut the merge tree into ``n_themes`` subtrees by splitting, from the root down, the theme with the most papers.

    ``sizes``: {topic id: papers} of every real topic (outliers excluded). Topics the tree does not hold become
    themes of their own; with no tree every topic is its own theme. Returns topic sets, in no set order.
    """
    topic_set = frozenset(int(topic) for topic in sizes if int(topic) != OUTLIER_TOPIC)
    roots = [node for node in tree if not any(node < other for other in tree)]
    themes: list[frozenset[int]] = [root & topic_set for root in roots if root & topic_set]
    held = frozenset().union(*themes) if themes else frozenset()
    themes += [frozenset([topic]) for topic in sorted(topic_set - held)]

    def papers(theme: frozenset[int]) -> int:
        return sum(int(sizes[topic]) for topic in theme)

    while len(themes) < n_themes:
        splittable = [theme for theme in themes if theme in tree]
        if not splittable:
            break
        largest = max(splittable, key=lambda theme: (papers(theme), -min(theme)))
        themes.remove(largest)
        themes.extend(child & topic_set for child in tree[largest].children if child & topic_set)
    return themes


def _first_term(label: str) -> str:
    return str(label).split(", ")[0].strip()


def theme_name(members: Sequence[tuple[str, int]]) -> str:
    """A theme's name from its topics' (label, size): the first term of each of the largest labels, up to three;
    a theme of one topic keeps that topic's label.

    Terms are compared case-insensitively, so a term is never named twice.
    """
    ordered = sorted(members, key=lambda member: -member[1])
    terms: list[str] = []
    for label, _ in ordered:
        term = _first_term(label)
        if term and term.lower() not in {chosen.lower() for chosen in terms}:
            terms.append(term)
        if len(terms) == THEME_NAME_TERMS:
            break
    if len(ordered) == 1:
        return str(ordered[0][0])
    return ", ".join(terms)


def _unique_names(names: list[str], members: list[list[tuple[str, int]]]) -> list[str]:
    """``names`` made unique: a repeated name gains the first term of its theme's next topic, else a number."""
    unique: list[str] = []
    for name, topics in zip(names, members):
        candidate = name
        if candidate in unique:
            extra = [
                _first_term(label) for label, _ in sorted(topics, key=lambda member: -member[1])[THEME_NAME_TERMS:]
            ]
            candidate = f"{name}, {extra[0]}" if extra else name
        number = 2
        while candidate in unique:
            candidate, number = f"{name} ({number})", number + 1
        unique.append(candidate)
    return unique


def assign_themes(topics: pd.DataFrame, hierarchy: pd.DataFrame, n_themes: int | None = None) -> pd.DataFrame:
    """A copy of ``topics`` with a theme id and name per topic (columns ``theme`` int, ``theme_label`` str).

    ``topics``: columns topic, label, size (a cache's topics table, outlier row -1 optional). ``hierarchy``: the
    cache's hierarchy table (may be empty: every topic is then its own theme). ``n_themes``: default
    :func:`theme_count` of the real topics. Themes are numbered 0, 1, ... from the most papers to the fewest (ties:
    smallest topic id first); the outlier topic gets theme -1, "Outliers". Row order and other columns are kept.

    Raises ValueError when ``hierarchy`` is not a merge tree (see :func:`merge_tree`).
    """
    real = topics[topics["topic"].astype(int) != OUTLIER_TOPIC]
    sizes = {int(topic): int(size) for topic, size in zip(real["topic"], real["size"])}
    labels = {int(topic): str(label) for topic, label in zip(real["topic"], real["label"])}
    wanted = theme_count(len(sizes)) if n_themes is None else int(n_themes)
    themes = cut_tree(merge_tree(hierarchy), sizes, wanted)
    themes.sort(key=lambda members: (-sum(sizes[topic] for topic in members), min(members)))
    members = [[(labels[topic], sizes[topic]) for topic in sorted(theme)] for theme in themes]
    names = _unique_names([theme_name(topic_list) for topic_list in members], members)
    theme_of = {topic: number for number, theme in enumerate(themes) for topic in theme}
    name_of = {number: name for number, name in enumerate(names)}
    ids = [theme_of.get(int(topic), OUTLIER_THEME) for topic in topics["topic"]]
    return topics.assign(
        theme=pd.Series(ids, index=topics.index, dtype="int64"),
        theme_label=[name_of.get(theme, OUTLIER_LABEL) for theme in ids],
    )


def has_themes(topics: pd.DataFrame) -> bool:
    """True when a topics table already carries the theme columns (caches built with themes)."""
    return all(column in topics.columns for column in THEME_COLUMNS)


def leaf_order(hierarchy: pd.DataFrame, topic_ids: Iterable[int]) -> list[int]:
    """The real topics in the merge tree's depth-first order (larger child first), so the topics of a theme, and
    similar themes, stand next to each other; topics the tree lacks follow in id order. Outliers are left out."""
    tree = merge_tree(hierarchy)
    wanted = [int(topic) for topic in topic_ids if int(topic) != OUTLIER_TOPIC]
    roots = sorted(
        (node for node in tree if not any(node < other for other in tree)), key=lambda node: (-len(node), min(node))
    )
    order: list[int] = []

    def visit(node: frozenset[int]) -> None:
        if node in tree:
            for child in tree[node].children:
                visit(child)
        else:
            order.extend(sorted(node))

    for root in roots:
        visit(root)
    present = set(wanted)
    ordered = [topic for topic in order if topic in present]
    return ordered + sorted(present - set(ordered))


def standardised(block: np.ndarray) -> np.ndarray:
    """``block`` (t x d) centred on its column means and scaled so the mean squared length of its rows is 1 (its
    total variance 1): the block scaling of multiblock methods (Westerhuis, Kourti & MacGregor 1998), so two blocks
    side by side weigh alike in squared Euclidean distances whatever their dimensions. A block without spread stays
    all zero."""
    values = np.asarray(block, dtype=np.float64)
    if not len(values):  # no topics: nothing to centre (and no mean of an empty slice)
        return values.copy()
    centred = values - values.mean(axis=0)
    spread = float(np.sqrt((centred * centred).sum(axis=1).mean()))
    return centred / spread if spread > 0 else np.zeros_like(centred)


def combined_features(representation: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """t x (d + 2): the two blocks (t x d centroids, t x 2 map positions) each :func:`standardised`, side by side."""
    return np.hstack([standardised(representation), standardised(positions)])


def numbered(groups: Sequence[Sequence[int]], sizes: Sequence[int] | np.ndarray) -> np.ndarray:
    """A theme id per topic (shape t) from ``groups`` (lists of topic row indices covering 0..t-1): themes numbered
    0, 1, ... from the most papers (``sizes``, t) to the fewest, ties by their smallest row."""
    weights = np.asarray(sizes, dtype=np.float64)
    order = sorted(groups, key=lambda rows: (-float(weights[list(rows)].sum()), min(rows)))
    themes = np.full(len(weights), OUTLIER_THEME, dtype=np.int64)
    for theme, rows in enumerate(order):
        themes[list(rows)] = theme
    return themes


def guarded_cut(
    linkage_matrix: np.ndarray, sizes: Sequence[int] | np.ndarray, n_themes: int, cap: float = SHARE_CAP
) -> np.ndarray:
    """Cut a linkage tree (scipy's ``linkage_matrix`` of t >= 2 topics) into ``n_themes`` themes, from the root
    down: while a theme holds more than ``cap`` of the papers (``sizes``, t) and can be split, the largest such theme
    is split; otherwise the theme whose merge is highest. With ``cap`` >= 1 this is the usual cut into k clusters
    (scipy's ``fcluster(..., criterion="maxclust")`` for a monotone linkage). Returns a theme id per topic (t),
    numbered by :func:`numbered`; fewer themes only when every theme is one topic."""
    from scipy.cluster.hierarchy import ClusterNode, to_tree

    weights = np.asarray(sizes, dtype=np.float64)
    limit = cap * float(weights.sum())

    def papers(node: ClusterNode) -> float:
        return float(weights[node.pre_order()].sum())

    themes: list[ClusterNode] = [to_tree(np.asarray(linkage_matrix, dtype=np.float64))]
    while len(themes) < n_themes:
        splittable = [node for node in themes if not node.is_leaf()]
        if not splittable:
            break
        oversized = [node for node in splittable if papers(node) > limit]
        chosen = max(oversized, key=papers) if oversized else max(splittable, key=lambda node: node.dist)
        # ClusterNode compares by height (==), so the chosen node is removed by identity.
        themes = [node for node in themes if node is not chosen] + [chosen.get_left(), chosen.get_right()]
    return numbered([node.pre_order() for node in themes], weights)


def cut_themes(
    features: np.ndarray,
    sizes: Sequence[int] | np.ndarray,
    n_themes: int,
    cap: float = SHARE_CAP,
    method: str = "ward",
) -> np.ndarray:
    """A theme id per topic (t) for topics described by ``features`` (t x d, e.g. :func:`combined_features`) of
    ``sizes`` papers: agglomerative linkage (Euclidean; ``method`` "ward", Ward 1963, or "average", UPGMA) cut by
    :func:`guarded_cut`. Every topic its own theme when ``n_themes`` >= t; one theme when ``n_themes`` <= 1."""
    from scipy.cluster.hierarchy import linkage

    count = len(np.asarray(sizes))
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    if n_themes >= count:
        return numbered([[row] for row in range(count)], sizes)
    if n_themes <= 1:
        return np.zeros(count, dtype=np.int64)
    return guarded_cut(linkage(np.asarray(features, dtype=np.float64), method=method), sizes, n_themes, cap)


def topic_positions(
    topics: np.ndarray, vectors: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ids t, sizes t, centroids t x d, map positions t x 2) of the real topics of ``topics`` (n topic ids, -1
    left out): each topic's unit-length mean of its papers' unit ``vectors`` (n x d) and the median of its papers'
    ``points`` (n x 2, where its label sits). Ids ascending."""
    labels = np.asarray(topics, dtype=np.int64)
    xy = np.asarray(points, dtype=np.float64)
    ids = np.unique(labels[labels != OUTLIER_TOPIC])
    sizes = np.zeros(len(ids), dtype=np.int64)
    means = np.zeros((len(ids), np.shape(vectors)[1]))
    positions = np.zeros((len(ids), 2))
    # One topic's rows at a time in float64 (the same arithmetic, row by row, as over the whole matrix at once): a
    # float64 copy of every vector, and its unit copy, were 2 x 1.1 GB at 285,717 x 512 (issue 42).
    for index, topic in enumerate(ids):
        members = labels == topic
        unit = np.asarray(vectors[members], dtype=np.float64)
        unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
        sizes[index], means[index], positions[index] = members.sum(), unit.mean(axis=0), np.median(xy[members], axis=0)
    centroids = means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    return ids, sizes, centroids, positions


def assign_cut_themes(
    frame: pd.DataFrame, topics: np.ndarray, vectors: np.ndarray, points: np.ndarray, n_themes: int | None = None
) -> pd.DataFrame:
    """The build's themes: a copy of ``frame`` (a topics table with topic, label, size) with ``theme`` (int) and
    ``theme_label`` (the first terms of its largest topics, :func:`theme_name`; the build then names it from its
    phrases) cut by :func:`cut_themes` from :func:`topic_positions` of the papers' ``topics`` (n), ``vectors``
    (n x d) and map ``points`` (n x 2). ``n_themes``: default :func:`theme_count`. The outlier topic gets theme -1,
    "Outliers"; row order and other columns are kept."""
    ids, sizes, centroids, positions = topic_positions(topics, vectors, points)
    wanted = theme_count(len(ids)) if n_themes is None else int(n_themes)
    themes = cut_themes(combined_features(centroids, positions), sizes, wanted)
    theme_of = {int(topic): int(theme) for topic, theme in zip(ids, themes)}
    labels = {int(topic): str(label) for topic, label in zip(frame["topic"], frame["label"])}
    members: dict[int, list[tuple[str, int]]] = {}
    for topic, theme, size in zip(ids, themes, sizes):
        members.setdefault(int(theme), []).append((labels.get(int(topic), f"Topic {int(topic)}"), int(size)))
    order = sorted(members)
    names = dict(
        zip(order, _unique_names([theme_name(members[theme]) for theme in order], [members[t] for t in order]))
    )
    column = [theme_of.get(int(topic), OUTLIER_THEME) for topic in frame["topic"]]
    return frame.assign(
        theme=pd.Series(column, index=frame.index, dtype="int64"),
        theme_label=[names.get(theme, OUTLIER_LABEL) for theme in column],
    )
