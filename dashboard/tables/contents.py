"""The atlas's table of contents: themes, their topics and the topics' subtopics, with paper counts. Pure (pandas).

The three levels nest: a theme (topics' ``theme``) holds topics, a topic may hold subtopics (the cache's subtopics
table and the documents' ``subtopic`` column, -1 for none; caches built before subtopics have neither).

Three steps, so the page can cache each on what it depends on: :func:`contents_tree` (the cache's tables alone),
:func:`contents_counts` (the papers that pass the filters) and :func:`contents_table` (what is drilled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard

import numpy as np
import pandas as pd

from pipeline.topics.themes import OUTLIER_THEME

LEVEL_COLUMNS = ("theme", "topic", "subtopic")  # level 0, 1, 2 -> the documents' column that groups it
OUTLIER_SUBTOPIC = -1  # a paper without a subtopic: an outlier, or its topic is too small to have subtopics
WHOLE_MAP_NAME = "All papers (the whole map)"
# A level's indent: an em space, which the grid draws as it is (a plain space is a third as wide); two a level took
# 28 px of a subtopic's name at 900 px.
INDENT = "\u2003"
DRILLED_MARK = "▶ "  # the drilled theme and topic, and the subtopic whose papers are selected
TREE_COLUMNS = ["level", "theme", "topic", "subtopic", "name", "size"]


def has_subtopics(subtopics: pd.DataFrame | None) -> TypeGuard[pd.DataFrame]:
    """Whether ``subtopics`` (TopicCache.subtopics; None or empty for caches built before them) has any row."""
    return subtopics is not None and len(subtopics) > 0


def level_keys(documents: pd.DataFrame, column: str) -> np.ndarray:
    """Each document's group id at the level of ``column`` (theme, topic or subtopic), int64; -1 for none. A
    missing ``subtopic`` column (caches built before subtopics) or a missing value (a copy's) is -1."""
    if column not in documents.columns:
        return np.full(len(documents), OUTLIER_SUBTOPIC, dtype=np.int64)
    values = documents[column]
    if values.dtype.kind in "iu":
        return values.to_numpy(dtype=np.int64)
    return pd.to_numeric(values, errors="coerce").fillna(OUTLIER_SUBTOPIC).to_numpy(dtype=np.int64)


def contents_tree(topics: pd.DataFrame, subtopics: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per theme, topic and subtopic in reading order: each theme (largest first) followed by its topics
    (largest first), each topic by its subtopics (largest first). Outliers are left out.

    ``topics``: topic, label, size, theme, theme_label; ``subtopics``: subtopic, topic, label, size (None or empty:
    two levels). Returns columns level (0 theme, 1 topic, 2 subtopic), theme, topic, subtopic (ids, -1 below the
    row's level), name, size (the atlas's papers), index 0..rows-1."""
    real = topics[(topics["topic"].astype(int) != -1) & (topics["theme"].astype(int) != OUTLIER_THEME)]
    parts = subtopics if has_subtopics(subtopics) else pd.DataFrame(columns=["subtopic", "topic", "label", "size"])
    parts_of = {
        int(topic): group.sort_values(["size", "subtopic"], ascending=[False, True])
        for topic, group in parts.groupby("topic")
    }
    theme_sizes = real.groupby("theme")["size"].sum().sort_index()
    rows: list[tuple[int, int, int, int, str, int]] = []
    for theme in sorted(theme_sizes.index, key=lambda theme: (-int(theme_sizes[theme]), int(theme))):
        members = real[real["theme"] == theme].sort_values(["size", "topic"], ascending=[False, True])
        rows.append((0, int(theme), -1, -1, str(members["theme_label"].iloc[0]), int(theme_sizes[theme])))
        for topic, label, size in zip(members["topic"].astype(int), members["label"].astype(str), members["size"]):
            rows.append((1, int(theme), topic, -1, label, int(size)))
            group = parts_of.get(topic, parts.iloc[0:0])
            for subtopic, name, count in zip(group["subtopic"], group["label"], group["size"]):
                rows.append((2, int(theme), topic, int(subtopic), str(name), int(count)))
    return pd.DataFrame(rows, columns=TREE_COLUMNS).astype(
        {"level": "int64", "theme": "int64", "topic": "int64", "subtopic": "int64", "size": "int64"}
    )


def contents_counts(tree: pd.DataFrame, papers: Sequence[pd.DataFrame | None]) -> np.ndarray:
    """Per row of ``tree``, how many of ``papers`` (frames with theme and topic columns, subtopic when the cache
    has it; None skipped; together the papers that pass the filters) are in its theme, topic or subtopic: int64
    (rows). One count per level over the papers, not a pass per row (375 rows at 11,660 papers)."""
    counts = np.zeros(len(tree), dtype=np.int64)
    frames = [frame for frame in papers if frame is not None and len(frame)]
    for level, column in enumerate(LEVEL_COLUMNS):
        at_level = (tree["level"] == level).to_numpy()
        if not at_level.any() or not frames:
            continue
        keys = np.concatenate([level_keys(frame, column) for frame in frames])
        per_key = pd.Series(keys[keys != OUTLIER_SUBTOPIC]).value_counts()
        counts[at_level] = tree.loc[at_level, column].map(per_key).fillna(0).to_numpy(dtype=np.int64)
    return counts


def contents_table(
    tree: pd.DataFrame,
    counts: np.ndarray,
    total: int,
    theme: int | None = None,
    topic: int | None = None,
    subtopic: int | None = None,
) -> tuple[pd.DataFrame, list[int]]:
    """The table of contents as the page shows it, and per shown row its row of ``tree`` (-1: the whole map).

    Rows: the whole map first (``total`` papers), then the rows of ``tree`` with papers among the filtered ones
    (``counts``, from :func:`contents_counts`) and the drilled ``theme``, ``topic`` and selected ``subtopic`` even
    without. Columns: Contents (the name indented by its level, the drilled ones marked DRILLED_MARK), Papers
    (int64). The level is the indent alone: a Level column cost the room of the names at 900 px."""
    drilled = (
        ((tree["level"] == 0) & (tree["theme"] == theme))
        | ((tree["level"] == 1) & (tree["topic"] == topic))
        | ((tree["level"] == 2) & (tree["subtopic"] == subtopic))
    ).to_numpy()
    kept = np.flatnonzero((counts > 0) | drilled)
    levels = tree["level"].to_numpy()[kept]
    names = [
        INDENT * int(level) + (DRILLED_MARK if marked else "") + name
        for level, marked, name in zip(levels, drilled[kept], tree["name"].to_numpy()[kept])
    ]
    whole = (DRILLED_MARK if theme is None else "") + WHOLE_MAP_NAME
    table = pd.DataFrame(
        {
            "Contents": [whole, *names],
            "Papers": np.concatenate([[total], counts[kept]]).astype(np.int64),
        }
    )
    return table, [-1, *(int(row) for row in kept)]


def topic_parts(matching: pd.DataFrame, context: pd.DataFrame | None, topic: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the papers of ``matching`` in ``topic``, every other paper of ``matching`` and ``context``): a drilled
    topic's papers and the rest of the filtered papers around them, in the listing's order."""
    in_topic = (matching["topic"].astype(int) == topic).to_numpy()
    rest = matching[~in_topic]
    return matching[in_topic], rest if context is None else pd.concat([context, rest]).sort_index()
