"""The map's rules: what a view (:class:`MapState`) shows, colour groups, palettes, label levels and label groups. Pure.

A view says how points are coloured (theme, topic, decision, primary area, venue or year), which level is labelled
(by zoom, themes, topics or subtopics) and which theme or topic, if any, is drilled into. Three levels nest: a theme
holds topics, a topic may hold subtopics (``pipeline.cache.TopicCache.subtopics`` and the documents' ``subtopic``
column); a figure that cannot follow the zoom (plotly, the publication figure) labels one level. Each label says its
group's name, points at its group's densest cell, and has its group's colour when points are coloured by that group.

:func:`dashboard.figures.map_model.map_model` applies these rules to one view; every renderer of the map draws the
model it makes (the WebGL component's layers, :mod:`dashboard.figures.plotly_map`, the publication figure, the
share page).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dashboard.display import (
    OUTLIER_COLOUR,
    OUTLIER_LABEL,
    OUTLIER_TOPIC,
    TOPIC_PALETTE,
    shorten,
)
from dashboard.figures.decision_charts import DECISION_COLOURS
from dashboard.figures.label_layout import dense_anchor, wrap_name
from dashboard.tables.contents import LEVEL_COLUMNS, has_subtopics, level_keys
from pipeline.topics.themes import OUTLIER_THEME, assign_themes, has_themes

COLOUR_MODES = {
    "theme": "Theme",
    "topic": "Topic",
    "decision": "Decision",
    "primary_area": "Primary area",
    "venue": "Venue",  # atlases of several collections (issue 22)
    "year": "Year",
}
OTHER_YEARS = "Other years"  # the grey group of the papers outside the highlighted year
LEVELS = {"zoom": "By zoom", "themes": "Themes", "topics": "Topics", "subtopics": "Subtopics"}
FIXED_LEVELS = {"themes": 0, "topics": 1, "subtopics": 2}  # a LEVELS key that labels one level -> that level
UNKNOWN = "Unknown"
# The papers outside the filters, drawn as context: a grey that, at the WebGL map's context opacity
# (map_layers.CONTEXT_OPACITY, 0.7) and plotly's (0.6) on white, keeps a WCAG contrast of 1.7:1 and 1.6:1 (at least
# 1.5:1, visible), grey, smaller and lighter than the outliers' grey and all but the palette's lightest colours
# (recessive; tests/test_browser_context.py measures it). #D5D5D5 at 0.3 was 1.1:1: a
# highlighted year's other papers and a topic filter's context were all but invisible (issue 40, item 7).
CONTEXT_COLOUR = "#ADADAD"
PLOT_HEIGHT_PX = 760  # three quarters of a 1000-pixel-high window and more
THEME_LABEL_LINE_CHARS = 24
TOPIC_LABEL_LINE_CHARS = 28
# Themes: 20 colours, Okabe and Ito's six for colour-blind readers, then 14 found by bench/palette.py --search: no two
# closer than 9.4 in CAM02-UCS with normal vision or full deuteranopia, protanopia or tritanopia (11.0 with normal
# vision; the first ten, given to the largest themes, 11.0 and 15.7), all at least 18 from the outliers' and the
# context's greys. The Tol-based palette before had pairs at 5.8 (normal) and 0.7 (tritanopia): two blues, three
# yellow-greens (docs/decisions/theme-palette.md).
THEME_PALETTE: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#870F78", "#784B69", "#C3C387", "#9678FF",
    "#3C0FFF", "#69874B", "#C30096", "#96A55A", "#E1A5C3", "#1E5A4B", "#FF7896", "#A56987", "#B4004B", "#964B0F",
)  # fmt: skip


@dataclass(frozen=True)
class MapState:
    """What the map shows: ``colour_by`` (a key of COLOUR_MODES), ``level`` (a key of LEVELS), the drilled
    ``theme`` id (None: the whole map), the ``highlight`` year (None: every year in colour; else the other years'
    papers are grey) and the drilled ``topic`` id (None: none; a topic of the drilled theme)."""

    colour_by: str = "theme"
    level: str = "themes"
    theme: int | None = None
    highlight: int | None = None
    topic: int | None = None


@dataclass(frozen=True)
class Highlights:
    """doc_ids drawn on top of the map: search hits, the chosen paper and its similar papers."""

    search: tuple[str, ...] = ()
    chosen: str | None = None
    similar: tuple[str, ...] = ()

    def kinds(self) -> dict[str, tuple[str, ...]]:
        """{kind: doc_ids} in drawing order (see HIGHLIGHT_STYLES)."""
        return {"similar": self.similar, "search": self.search, "chosen": (self.chosen,) if self.chosen else ()}


def themed_topics(topics: pd.DataFrame, hierarchy: pd.DataFrame) -> pd.DataFrame:
    """``topics`` with theme columns: as the cache has them, else computed with the build's own function."""
    return topics if has_themes(topics) else assign_themes(topics, hierarchy)


def with_themes(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``documents`` with a ``theme`` column from ``topics``' topic -> theme (outliers and unknown: -1)."""
    theme_of = dict(zip(topics["topic"].astype(int), topics["theme"].astype(int)))
    return documents.assign(theme=documents["topic"].map(theme_of).fillna(OUTLIER_THEME).astype("int64"))


def _ranked_colours(keys: Iterable[Any]) -> dict[Any, str]:
    return {key: TOPIC_PALETTE[rank % len(TOPIC_PALETTE)] for rank, key in enumerate(keys)}


def topic_colours(topics: pd.DataFrame) -> dict[int, str]:
    """{topic id: colour}: TOPIC_PALETTE in order of topic id (never indexed by the id itself), outliers grey.

    For ids 0..K-1 this is :func:`dashboard.figures.charts.topic_colour`'s colour, so other charts agree."""
    colours = _ranked_colours(sorted(int(topic) for topic in topics["topic"] if int(topic) != OUTLIER_TOPIC))
    colours[OUTLIER_TOPIC] = OUTLIER_COLOUR
    return colours


def theme_colours(topics: pd.DataFrame) -> dict[int, str]:
    """{theme id: colour} from THEME_PALETTE in order of theme id (largest theme first), outliers grey."""
    themes = sorted({int(theme) for theme in topics["theme"] if int(theme) != OUTLIER_THEME})
    colours = {theme: THEME_PALETTE[rank % len(THEME_PALETTE)] for rank, theme in enumerate(themes)}
    colours[OUTLIER_THEME] = OUTLIER_COLOUR
    return colours


def area_order(documents: pd.DataFrame) -> list[str]:
    """Primary areas present, most papers first (ties alphabetical); empty without the column."""
    if "primary_area" not in documents.columns:
        return []
    counts = documents["primary_area"].dropna().astype(str).str.strip()
    counts = counts[counts != ""].value_counts()
    return sorted(counts.index, key=lambda area: (-int(counts[area]), area))


def colour_groups(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    colour_by: str,
    areas: Sequence[str] | None = None,
    highlight: int | None = None,
) -> tuple[np.ndarray, dict[str, str]]:
    """Each document's colour group name and {group name: colour} in legend order.

    ``documents`` needs topic (and theme, decision, primary_area, venue or year for those modes); ``topics`` topic,
    label, theme, theme_label. Outliers (topic or theme mode) and missing values (decision, primary area, venue,
    year) form the group "Outliers" / "Unknown", coloured grey and listed last. ``areas``: the corpus's area order
    (see :func:`area_order`), so colours do not change with the filters. ``highlight``: a year whose papers keep
    their colour while every other paper joins the grey group OTHER_YEARS (needs ``year``). Raises ValueError for an
    unknown mode.
    """
    names, legend = _mode_groups(documents, topics, colour_by, areas)
    if highlight is not None and "year" in documents.columns:
        names = names.copy()
        names[(documents["year"] != highlight).fillna(True).to_numpy(dtype=bool)] = OTHER_YEARS
        legend = {**legend, OTHER_YEARS: CONTEXT_COLOUR}
    return names, legend


def _collection_groups(documents: pd.DataFrame, column: str) -> tuple[np.ndarray, dict[str, str]]:
    """Groups by venue (most papers first) or by year (in time order), missing values "Unknown"."""
    values = documents[column] if column in documents.columns else pd.Series(None, index=documents.index)
    present = values.dropna()
    if column == "year":
        order = [str(int(year)) for year in sorted(present.unique())]
        names = np.asarray([str(int(year)) if year == year and year is not None else UNKNOWN for year in values])
    else:
        counts = present.astype(str).value_counts()
        order = sorted(counts.index, key=lambda name: (-int(counts[name]), name))
        names = np.asarray(values.where(values.notna(), UNKNOWN).astype(str), dtype=object)
    legend = _ranked_colours(order)
    legend[UNKNOWN] = OUTLIER_COLOUR
    return names.astype(object), legend


def _mode_groups(
    documents: pd.DataFrame, topics: pd.DataFrame, colour_by: str, areas: Sequence[str] | None
) -> tuple[np.ndarray, dict[str, str]]:
    """colour_groups without the highlight."""
    if colour_by == "topic":
        labels = {int(topic): str(label) for topic, label in zip(topics["topic"], topics["label"])}
        colours = topic_colours(topics)
        ordered = sorted(topic for topic in labels if topic != OUTLIER_TOPIC)
        names = np.asarray(
            [
                labels.get(int(topic), OUTLIER_LABEL) if int(topic) != OUTLIER_TOPIC else OUTLIER_LABEL
                for topic in documents["topic"]
            ],
            dtype=object,
        )
        legend = {labels[topic]: colours[topic] for topic in ordered}
        legend[OUTLIER_LABEL] = OUTLIER_COLOUR
    elif colour_by == "theme":
        real = topics[topics["theme"] != OUTLIER_THEME].drop_duplicates("theme").sort_values("theme")
        labels = dict(zip(real["theme"].astype(int), real["theme_label"].astype(str)))
        colours = theme_colours(topics)
        names = np.asarray([labels.get(int(theme), OUTLIER_LABEL) for theme in documents["theme"]], dtype=object)
        legend = {labels[theme]: colours[theme] for theme in labels}
        legend[OUTLIER_LABEL] = OUTLIER_COLOUR
    elif colour_by == "decision":
        known = [decision for decision in DECISION_COLOURS if decision != UNKNOWN]
        values = documents["decision"] if "decision" in documents.columns else pd.Series(None, index=documents.index)
        names = np.asarray(values.where(values.isin(known), UNKNOWN).astype(object), dtype=object)
        legend = {decision: DECISION_COLOURS[decision] for decision in known}
        legend[UNKNOWN] = "#BDBDBD"
    elif colour_by == "primary_area":
        order = list(areas) if areas is not None else area_order(documents)
        values = (
            documents["primary_area"] if "primary_area" in documents.columns else pd.Series(None, index=documents.index)
        )
        names = np.asarray(values.where(values.isin(order), UNKNOWN).astype(object), dtype=object)
        legend = _ranked_colours(order)
        legend[UNKNOWN] = OUTLIER_COLOUR
    elif colour_by in ("venue", "year"):
        names, legend = _collection_groups(documents, colour_by)
    else:
        raise ValueError(f"unknown colour mode {colour_by!r}; expected one of {sorted(COLOUR_MODES)}")
    return names, legend


@dataclass
class LabelGroups:
    """The labels of one level of a view: per label its key (theme, topic or subtopic id), name, text lines, font
    size, anchor, colour and size (its papers among those labelled)."""

    keys: list[int] = field(default_factory=list)
    lines: list[list[str]] = field(default_factory=list)
    font_px: list[float] = field(default_factory=list)
    anchors: list[tuple[float, float]] = field(default_factory=list)
    colours: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


def first_level(state: MapState, topics_filtered: bool = False) -> int:
    """The shallowest level a view labels: 0 (themes) on the whole map, 1 (topics) when a theme is drilled or the
    sidebar filters topics, 2 (subtopics) when a topic is drilled."""
    if state.topic is not None:
        return 2
    return 1 if state.theme is not None or topics_filtered else 0


def label_level(state: MapState, subtopics: pd.DataFrame | None = None, topics_filtered: bool = False) -> int:
    """The level a view labels first (and the only one a figure that cannot follow the zoom labels): the fixed
    level chosen ("By zoom": 0), never shallower than :func:`first_level`. Subtopics (2) only with ``subtopics``,
    and for a drilled topic only when it has some (a topic under ~60 papers has none: its own label stays)."""
    level = max(FIXED_LEVELS.get(state.level, 0), first_level(state, topics_filtered))
    if level != 2:
        return level
    if not has_subtopics(subtopics):
        return 1
    if state.topic is not None and not (subtopics["topic"].astype(int) == state.topic).any():
        return 1
    return level


def label_levels(state: MapState, subtopics: pd.DataFrame | None = None, topics_filtered: bool = False) -> list[int]:
    """The levels a view sends labels for: by zoom, from :func:`label_level` down to the deepest the cache has
    (subtopics when ``subtopics`` has rows, else topics); a fixed level alone otherwise."""
    level = label_level(state, subtopics, topics_filtered)
    if state.level != "zoom":
        return [level]
    return list(range(level, (2 if has_subtopics(subtopics) else 1) + 1))


def label_column(state: MapState, subtopics: pd.DataFrame | None = None) -> str:
    """The documents' column that a one-level figure's labels group by: "theme" at the theme level of the whole map
    (and "By zoom"), "topic" in a drilled theme or at the topic level, "subtopic" in a drilled topic or at the
    subtopic level when ``subtopics`` are given (see :func:`label_level`)."""
    return LEVEL_COLUMNS[label_level(state, subtopics)]


def labels_name_colours(state: MapState) -> bool:
    """Whether the view's labels name its colour groups (themes coloured and labelled, or topics): then a figure's
    labels, in their groups' colours, are its legend."""
    return state.colour_by == label_column(state) and state.highlight is None


def level_names(column: str, topics: pd.DataFrame, subtopics: pd.DataFrame | None = None) -> dict[int, str]:
    """{id: name} of the groups at the level of ``column``, outliers left out: themes' theme_label, topics' label,
    subtopics' label (none without ``subtopics``)."""
    if column == "theme":
        rows = topics[topics["theme"] != OUTLIER_THEME].drop_duplicates("theme")
        return dict(zip(rows["theme"].astype(int), rows["theme_label"].astype(str)))
    if column == "topic":
        real = topics[topics["topic"].astype(int) != OUTLIER_TOPIC]
        return dict(zip(real["topic"].astype(int), real["label"].astype(str)))
    if not has_subtopics(subtopics):
        return {}
    return dict(zip(subtopics["subtopic"].astype(int), subtopics["label"].astype(str)))


def level_colours(column: str, topics: pd.DataFrame, subtopics: pd.DataFrame | None, colour_by: str) -> dict[int, str]:
    """{id: colour} of a level's labels whose papers all share one colour group: themes coloured by theme, topics
    by topic, and a subtopic by its topic's colour when points are coloured by topic; {} otherwise (grey)."""
    if column == "theme" and colour_by == "theme":
        return theme_colours(topics)
    if column == "topic" and colour_by == "topic":
        return topic_colours(topics)
    if column == "subtopic" and colour_by == "topic" and has_subtopics(subtopics):
        colours = topic_colours(topics)
        return {
            int(subtopic): colours.get(int(topic), OUTLIER_COLOUR)
            for subtopic, topic in zip(subtopics["subtopic"], subtopics["topic"])
        }
    return {}


def colours_subtopics(state: MapState, subtopics: pd.DataFrame | None) -> bool:
    """Whether the map and its publication figure colour a drilled topic's papers by their subtopics: a topic is
    drilled and labelled by its subtopics (:func:`label_level` 2: ``subtopics``, the cache's table, has some of it),
    and the points are coloured by theme or topic, which would draw the whole topic in one colour (no year
    highlighted). Coloured by decision, primary area, venue or year, the points keep that colour and its legend."""
    return (
        state.topic is not None
        and state.colour_by in ("theme", "topic")
        and state.highlight is None
        and label_level(state, subtopics) == 2
    )


def subtopic_colours(keys: np.ndarray) -> np.ndarray:
    """Each paper's colour by its subtopic, ``keys`` (int, n: subtopic ids, -1 for a paper of no subtopic): the
    theme palette (Okabe and Ito's colours first, told apart by colour-blind readers; at most 10 subtopics a
    topic) in order of size, largest first (ties by id), and the outliers' grey for -1. Returns str (n)."""
    keys = np.asarray(keys, dtype=np.int64)
    present, counts = np.unique(keys[keys != -1], return_counts=True)
    ranked = present[np.lexsort((present, -counts))]
    palette = THEME_PALETTE
    colour_of = {int(key): palette[rank % len(palette)] for rank, key in enumerate(ranked)}
    return np.asarray([colour_of.get(int(key), OUTLIER_COLOUR) for key in keys], dtype=object)


def drilled_subtopic_groups(
    listing: pd.DataFrame,
    matches: np.ndarray,
    groups: tuple[np.ndarray, dict[str, str]],
    state: MapState,
    subtopics: pd.DataFrame,
) -> tuple[np.ndarray, dict[str, str]]:
    """:func:`colour_groups`' (names, legend) of ``listing`` with the drilled topic's matching papers (``matches``,
    bool n) named and coloured by their subtopics as :func:`subtopic_colours` colours them (the publication figure's
    colours), a paper of no subtopic in the outliers' grey. New arrays; ``groups`` is not modified."""
    names, legend = groups[0].copy(), dict(groups[1])
    in_topic = np.flatnonzero(matches & (listing["topic"].astype(int).to_numpy() == state.topic))
    keys = level_keys(listing, "subtopic")[in_topic]
    labels = dict(zip(subtopics["subtopic"].astype(int), subtopics["label"].astype(str)))
    names[in_topic] = pd.Series(keys).map(labels).fillna(OUTLIER_LABEL).to_numpy(dtype=object)
    for name, colour in zip(names[in_topic], subtopic_colours(keys)):  # each subtopic's colour, once
        legend.setdefault(name, OUTLIER_COLOUR if name == OUTLIER_LABEL else colour)
    return names, legend


def point_labels(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    state: MapState,
    subtopics: pd.DataFrame | None = None,
    column: str | None = None,
) -> np.ndarray:
    """Each document's label group name at the view's level (or at ``column``'s): "" for outliers, for papers
    without a group at that level and for papers outside a drilled theme or topic."""
    column = column or label_column(state, subtopics)
    keys = level_keys(documents, column)
    # One hash lookup per point in pandas (a Python loop over 11,660 papers took 10 ms of every map view).
    labels = pd.Series(keys, dtype=np.int64).map(level_names(column, topics, subtopics)).fillna("")
    labels = labels.to_numpy(dtype=object)
    labels[keys == -1] = ""  # the outliers' id at every level
    if state.theme is not None:
        labels[documents["theme"].astype(int).to_numpy() != state.theme] = ""
    if state.topic is not None:
        labels[documents["topic"].astype(int).to_numpy() != state.topic] = ""
    return labels


LEVEL_FONT_STEP = {"theme": 3.0, "topic": 2.0, "subtopic": 1.5}  # px a level's largest label gains over its smallest


def label_groups(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    state: MapState,
    height_px: float = PLOT_HEIGHT_PX,
    subtopics: pd.DataFrame | None = None,
    column: str | None = None,
) -> LabelGroups:
    """The labels of the view over ``documents`` (the labelled points only) at the view's level (or ``column``'s):
    one per theme, topic or subtopic present, largest first, with its whole name (never cut: two balanced lines
    while the columns have room, else one; label_layout.wrap_name), a font from 11 to 15 px by size (DataMapPlot
    sizes labels by cluster), and its densest point."""
    column = column or label_column(state, subtopics)
    names = level_names(column, topics, subtopics)
    colours = level_colours(column, topics, subtopics, state.colour_by)
    line_chars = THEME_LABEL_LINE_CHARS if column == "theme" else TOPIC_LABEL_LINE_CHARS
    keys = level_keys(documents, column)
    present, counts = np.unique(keys[np.isin(keys, list(names))], return_counts=True)
    groups = LabelGroups()
    if not len(present):
        return groups
    largest = float(counts.max())
    two_lines = len(present) / 2 * (2 * 13 * 1.3 + 10) <= height_px - 40
    x, y = documents["x"].to_numpy(dtype=float), documents["y"].to_numpy(dtype=float)
    # Each group's members from one sort, not a pass over every point per group (300 subtopics at 11,660 papers).
    by_key = np.argsort(keys, kind="stable")
    sorted_keys = keys[by_key]
    for position in np.argsort(-counts, kind="stable"):
        key, count = int(present[position]), float(counts[position])
        name = names[key]
        lines = wrap_name(name, line_chars) if two_lines else [" ".join(name.split())]
        font = (11.0 if len(present) > 24 else 12.0) + LEVEL_FONT_STEP[column] * np.sqrt(count / largest)
        members = by_key[np.searchsorted(sorted_keys, key) : np.searchsorted(sorted_keys, key, side="right")]
        groups.keys.append(key)
        groups.names.append(name)
        groups.lines.append(lines or [name])
        groups.font_px.append(round(float(font), 1))
        groups.anchors.append(dense_anchor(x[members], y[members]))
        groups.colours.append(colours.get(key, "#8A8A8A"))
        groups.sizes.append(int(count))
    return groups


def view_description(
    n_papers: int,
    topics: pd.DataFrame,
    corpus: str = "",
    chosen_topics: Sequence[int] = (),
    query: str = "",
    decisions: Sequence[str] = (),
    areas: Sequence[str] = (),
    theme: int | None = None,
    selected: int = 0,
    collections: Sequence[str] = (),
    highlight: int | None = None,
    topic: int | None = None,
) -> str:
    """One line that says what the view shows, for a figure's caption: corpus, papers shown, then each filter in
    use, e.g. "iclr2025/iclr2025_abstracts.parquet · 1,741 papers · theme: reasoning, MLLMs · decision: Oral".
    Plain text (not escaped)."""
    parts = [corpus] if corpus else []
    parts.append(f"{n_papers:,} papers")
    if theme is not None:
        names = topics.loc[topics["theme"] == theme, "theme_label"]
        parts.append(f"theme: {names.iloc[0] if len(names) else theme}")
    if topic is not None:
        names = topics.loc[topics["topic"] == topic, "label"]
        parts.append(f"topic: {shorten(str(names.iloc[0]), 40) if len(names) else topic}")
    if chosen_topics:
        labels = dict(zip(topics["topic"].astype(int), topics["label"].astype(str)))
        parts.append("topics: " + "; ".join(shorten(labels.get(int(topic), str(topic)), 40) for topic in chosen_topics))
    if query.strip():
        parts.append(f'search: "{query.strip()}"')
    if decisions:
        parts.append("decision: " + ", ".join(decisions))
    if areas:
        parts.append("primary area: " + "; ".join(shorten(area, 50) for area in areas))
    if collections:
        parts.append("collection: " + ", ".join(collections))
    if highlight is not None:
        parts.append(f"{highlight} highlighted, other years grey")
    if selected:
        parts.append(f"{selected:,} selected on the map")
    return " · ".join(parts)
