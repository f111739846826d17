"""Themes as sessions: topics grouped by the field their papers belong to (pipeline.topics.naming.fields).

A conference's programme puts "Diffusion models", "Text-to-image" and "Image super-resolution" in one session,
"Generative models", because a reader knows they are kinds of one thing, not because their abstracts are close.
Here each topic goes to the field that scores best over its papers (coverage corrected for chance,
:func:`pipeline.topics.naming.fields.field_scores`); a topic no field holds joins the group of its nearest topic
(centroid and map position, :func:`pipeline.topics.themes.combined_features`). While there are more groups than
:func:`pipeline.topics.themes.theme_count` wants, the group with the fewest papers joins a group of a field of
its area (pipeline/resources/fields.csv: "Neuroscience" and "Molecules and proteins" are "AI for science") or,
when there is none, the group whose field scores best over its papers (or, when none scores MERGE_MIN_SCORE, its
nearest group), so a merged theme keeps a name that covers it: its field's or its area's.

A topic of papers in another language (its papers mostly French, say: pipeline.topics.naming.languages) belongs to
no field and would join its nearest topic's theme (on the 290,219 papers of three anthologies, "Privacy and
federated learning"); it is a theme of its own instead, "Papers in French", in place of one of the others.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from pipeline.schema import OUTLIER_TOPIC
from pipeline.topics.naming.fields import (
    MIN_FIELD_LIFT,
    Field,
    field_presence,
    field_scores,
    group_coverage,
    load_fields,
)
from pipeline.topics.naming.phrase_counts import PhraseCounts
from pipeline.topics.themes import (
    OUTLIER_LABEL,
    OUTLIER_THEME,
    assign_cut_themes,
    combined_features,
    numbered,
    theme_count,
    topic_positions,
)

# A topic belongs to a field when the field holds at least this share of its papers (and MIN_FIELD_LIFT times
# the field's corpus share).
MIN_TOPIC_COVERAGE = 0.4
# A small group joins the group whose field scores best over its papers (field_scores) when that score is at least
# this (a field holding 50% of its papers at a base of 10%: 0.22), else its nearest group.
MERGE_MIN_SCORE = 0.2


def topic_fields(coverage: np.ndarray, base: np.ndarray) -> np.ndarray:
    """int64, t: the field index of each topic (rows of ``coverage``, t x f shares; ``base``, f corpus shares), the
    best :func:`field_scores` among the fields holding MIN_TOPIC_COVERAGE and MIN_FIELD_LIFT times their base of
    its papers; -1 where none does."""
    scores = field_scores(coverage, base[None, :])
    allowed = (coverage >= MIN_TOPIC_COVERAGE) & (coverage >= MIN_FIELD_LIFT * base[None, :]) & (scores > 0)
    scores = np.where(allowed, scores, -1.0)
    best = np.argmax(scores, axis=1) if scores.size else np.zeros(len(coverage), dtype=np.int64)
    return np.where(scores.max(axis=1, initial=-1.0) > 0, best, -1).astype(np.int64)


def field_groups(
    coverage: np.ndarray,
    base: np.ndarray,
    areas: Sequence[str],
    features: np.ndarray,
    sizes: np.ndarray,
    wanted: int,
) -> tuple[list[list[int]], list[int]] | None:
    """(groups of topic rows covering 0..t-1, the field index of each group) for topics with field ``coverage``
    (t x f), corpus shares ``base`` (f), each field's area (f), ``features`` (t x d) and ``sizes`` (t papers), at
    most ``wanted`` groups (module docstring). None when no topic belongs to a field."""
    fields = topic_fields(coverage, base)
    if not (fields >= 0).any():
        return None
    weights = np.asarray(sizes, dtype=np.float64)
    groups: dict[int, list[int]] = {}
    for row in np.flatnonzero(fields >= 0):
        groups.setdefault(int(fields[row]), []).append(int(row))
    placed = np.flatnonzero(fields >= 0)
    for row in np.flatnonzero(fields < 0):  # a topic no field holds joins its nearest topic's group
        nearest = placed[np.argmin(((features[placed] - features[row]) ** 2).sum(axis=1))]
        groups[int(fields[nearest])].append(int(row))

    def mean_of(values: np.ndarray, rows: list[int]) -> np.ndarray:
        return (values[rows] * weights[rows, None]).sum(axis=0) / max(weights[rows].sum(), 1e-12)

    while len(groups) > max(wanted, 1):
        small = min(groups, key=lambda field: (weights[groups[field]].sum(), field))
        others = [field for field in groups if field != small]
        kin = [field for field in others if areas[field] == areas[small]]
        others = kin or others  # a field of the same area first: "Molecules and proteins" with physics
        held = field_scores(mean_of(coverage, groups[small])[others], base[others])
        if kin or held.max() >= MERGE_MIN_SCORE:
            target = others[int(np.argmax(held))]
        else:
            centre = mean_of(features, groups[small])
            target = min(others, key=lambda field: float(((mean_of(features, groups[field]) - centre) ** 2).sum()))
        groups[target].extend(groups.pop(small))
    ordered = sorted(groups.items(), key=lambda item: min(item[1]))
    return [rows for _, rows in ordered], [field for field, _ in ordered]


def assign_field_themes(
    frame: pd.DataFrame,
    topics: np.ndarray,
    vectors: np.ndarray,
    points: np.ndarray,
    presence: sp.csr_matrix,
    fields: Sequence[Field],
    n_themes: int | None = None,
) -> pd.DataFrame | None:
    """A copy of ``frame`` (a topics table with topic, label, size) with ``theme`` and ``theme_label`` (its field's
    name; the build's namer, pipeline.topics.naming.assign.name_themes, has the last word) from :func:`field_groups`
    over the papers' ``topics`` (n), ``vectors`` (n x d), map ``points`` (n x 2) and field ``presence`` (n x f,
    pipeline.topics.naming.fields.field_presence). ``n_themes``: default theme_count. None when no topic belongs to
    a field (the caller cuts the themes from the map instead). The outlier topic gets theme -1, "Outliers"."""
    ids, sizes, centroids, positions = topic_positions(topics, vectors, points)
    coverage_of, base = group_coverage(presence, topics)
    if not len(ids):
        return None
    coverage = np.stack([coverage_of[int(topic)] for topic in ids])
    wanted = theme_count(len(ids)) if n_themes is None else int(n_themes)
    areas = [found.area for found in fields]
    found = field_groups(coverage, base, areas, combined_features(centroids, positions), sizes, wanted)
    if found is None:
        return None
    groups, group_fields = found
    themes = numbered(groups, sizes)
    theme_of = {int(topic): int(theme) for topic, theme in zip(ids, themes)}
    name_of = {int(themes[rows[0]]): fields[field].name for rows, field in zip(groups, group_fields)}
    column = [theme_of.get(int(topic), OUTLIER_THEME) for topic in frame["topic"]]
    return frame.assign(
        theme=pd.Series(column, index=frame.index, dtype="int64"),
        theme_label=[name_of.get(theme, OUTLIER_LABEL) for theme in column],
    )


def grouped_themes(
    frame: pd.DataFrame,
    topics: np.ndarray,
    vectors: np.ndarray,
    points: np.ndarray,
    counts: PhraseCounts | None,
    grouping: str,
    apart: Collection[int] = (),
) -> pd.DataFrame:
    """The build's themes (theme, theme_label) for ``frame``: by field (:func:`assign_field_themes`) when
    ``grouping`` is "fields" and the phrase ``counts`` of the papers are at hand and some topic belongs to a field,
    else cut from the map (pipeline.topics.themes.assign_cut_themes). Each topic of ``apart`` (a topic of papers in
    another language, pipeline.topics.naming.languages.topics_of_other_languages) is a theme of its own, in place of
    one of the themes the others are grouped into, so it joins no neighbour's theme and the count stays
    theme_count's. Raises ValueError for another ``grouping``."""
    if grouping not in ("fields", "map"):
        raise ValueError(f"theme grouping must be 'fields' or 'map', got {grouping!r}")
    topics = np.asarray(topics)
    real = {int(topic) for topic in frame["topic"]} - {OUTLIER_TOPIC}
    alone = sorted({int(topic) for topic in apart} & real)
    if not alone or len(alone) == len(real):
        return _grouped(frame, topics, vectors, points, counts, grouping, None)
    papers = ~np.isin(topics, alone)
    rest = frame[~frame["topic"].isin(alone)]
    wanted = max(theme_count(len(real)) - len(alone), 1)
    grouped = _grouped(rest, topics[papers], vectors[papers], points[papers], counts, grouping, wanted, papers)
    return with_own_themes(frame, grouped, alone)


def _grouped(
    frame: pd.DataFrame,
    topics: np.ndarray,
    vectors: np.ndarray,
    points: np.ndarray,
    counts: PhraseCounts | None,
    grouping: str,
    n_themes: int | None,
    papers: np.ndarray | None = None,
) -> pd.DataFrame:
    """:func:`grouped_themes` of ``frame``'s topics over their papers; ``papers`` (bool over ``counts``' rows): the
    rows of ``counts`` that are these papers (all when None)."""
    if grouping == "fields" and counts is not None:
        fields = load_fields()
        presence = field_presence(counts, fields)
        if papers is not None:
            presence = presence[np.flatnonzero(papers)]
        grouped = assign_field_themes(frame, topics, vectors, points, presence, fields, n_themes)
        if grouped is not None:
            return grouped
    return assign_cut_themes(frame, topics, vectors, points, n_themes)


def with_own_themes(frame: pd.DataFrame, grouped: pd.DataFrame, alone: Sequence[int]) -> pd.DataFrame:
    """``frame`` with theme and theme_label: ``grouped``'s for its topics, and a theme of its own, named by the topic,
    for each topic of ``alone``; the themes numbered again from the most papers to the fewest
    (pipeline.topics.themes.numbered)."""
    theme_of = dict(zip(grouped["topic"].astype(int), grouped["theme"].astype(int)))
    name_of = dict(zip(grouped["theme"].astype(int), grouped["theme_label"].astype(str)))
    labels = dict(zip(frame["topic"].astype(int), frame["label"].astype(str)))
    for offset, topic in enumerate(alone):
        theme_of[int(topic)] = max(name_of, default=-1) + 1 + offset
        name_of[theme_of[int(topic)]] = labels[int(topic)]
    real = [int(topic) for topic in frame["topic"] if int(topic) != OUTLIER_TOPIC]
    sizes = dict(zip(frame["topic"].astype(int), frame["size"].astype(int)))
    groups: dict[int, list[int]] = {}
    for row, topic in enumerate(real):
        groups.setdefault(theme_of[topic], []).append(row)
    renumbered = numbered(list(groups.values()), [sizes[topic] for topic in real])
    new_id = {old: int(renumbered[rows[0]]) for old, rows in groups.items()}
    column = [
        new_id[theme_of[int(topic)]] if int(topic) != OUTLIER_TOPIC else OUTLIER_THEME for topic in frame["topic"]
    ]
    names = {new_id[old]: name for old, name in name_of.items() if old in new_id}
    return frame.assign(
        theme=pd.Series(column, index=frame.index, dtype="int64"),
        theme_label=[names.get(theme, OUTLIER_LABEL) for theme in column],
    )
