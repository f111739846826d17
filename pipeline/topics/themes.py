"""Themes: the top level of the topic map, cut from BERTopic's topic hierarchy and named from their topics.

BERTopic's ``hierarchical_topics`` (the cache's ``hierarchy.parquet``, see :mod:`pipeline.cache`) is a binary
merge tree over the topics: each row merges two nodes into a parent whose ``topics`` lists every topic below it,
at a ``distance`` (the linkage distance of the topics' c-TF-IDF vectors). A **theme** is a node of that tree: the
tree is cut into about 10-20 themes by splitting, from the root down, the theme that holds the most papers (see
:func:`cut_tree`), so every theme is a subtree of the dendrogram and no theme dwarfs the others; this differs from the
usual cut of a dendrogram at a distance (Müllner 2011, "Modern hierarchical, agglomerative clustering algorithms",
sec. 2), which can leave one theme with half of the papers (docs/decisions/themes.md).

The tree is read through the ``topics`` lists only, never through node ids: topic ids may be any integers (a
rebuild can keep old ids), so a merged node's id may equal a topic id. Nothing here indexes an array by topic id.

Numpy and pandas only, so the dashboard imports this module too (to give themes to caches built before themes
existed, with the same function the build uses).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

OUTLIER_TOPIC = -1
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
