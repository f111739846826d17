"""The map model: what one view of the map shows, worked out once from the cache's tables and the view state. Pure.

Every renderer of the map draws from a :class:`MapModel` instead of deriving it again (issue 39): the page's WebGL
component (:func:`dashboard.figures.map_layers.view_layers` encodes it), the plotly map
(:func:`dashboard.figures.plotly_map.map_figure`, for ``$ATLAS_MAP_RENDERER=plotly`` and ``Atlas.figure``), the
publication figure (:func:`dashboard.figures.publication.view_of_map` turns it into a ``MapView``) and the share page
(:mod:`dashboard.export.share_page`, through ``view_layers``). So the points, their colour groups and palette, the
emphasis, the label groups (names, counts, anchors, colours) and the frame are the same wherever the map is drawn.

The rules themselves (colour groups, label levels, label groups) are :mod:`dashboard.figures.topic_map`'s; this module
applies them to one view. Positions are in the component's space: the map's coordinates centred and scaled by the
larger half-extent (:func:`normalisation`), so both axes keep one scale and every point lies in [-1, 1]
(regl-scatterplot's data space); :meth:`MapModel.to_map` takes a position back to map coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dashboard.display import OUTLIER_LABEL
from dashboard.figures.subtitles import group_subtitles
from dashboard.figures.topic_map import (
    CONTEXT_COLOUR,
    LEVEL_COLUMNS,
    OTHER_YEARS,
    PLOT_HEIGHT_PX,
    UNKNOWN,
    LabelGroups,
    MapState,
    colour_groups,
    colours_subtopics,
    drilled_subtopic_groups,
    label_groups,
    label_levels,
    level_keys,
    point_labels,
)

# A filtered or drilled view frames the matches' 2nd to 98th percentiles padded by FRAME_PAD of that span: the 8th to
# 92nd with 15% left about one match in eight outside the view, clipped at the map's edge (issue 40, item 7).
FRAME_QUANTILES = (0.02, 0.98)
FRAME_PAD = 0.1
EMPHASISED = ("Oral",)  # decision colouring draws these larger and opaque, so the orals stand out
GREY_GROUPS = (OUTLIER_LABEL, UNKNOWN, OTHER_YEARS)  # listed last in a legend


@dataclass(frozen=True)
class Normalisation:
    """data -> [-1, 1]: ``(value - centre) / half``, the same for both axes."""

    centre_x: float
    centre_y: float
    half: float

    def apply(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) in the component's space, float32."""
        return (
            ((np.asarray(x, dtype=float) - self.centre_x) / self.half).astype(np.float32),
            ((np.asarray(y, dtype=float) - self.centre_y) / self.half).astype(np.float32),
        )


def normalisation(listing: pd.DataFrame) -> Normalisation:
    """The cache's :class:`Normalisation` from its x and y columns (a unit one for no rows)."""
    if listing.empty:
        return Normalisation(0.0, 0.0, 1.0)
    x, y = listing["x"].to_numpy(dtype=float), listing["y"].to_numpy(dtype=float)
    half = max(float(np.ptp(x)), float(np.ptp(y)), 1e-9) / 2
    return Normalisation(float((x.max() + x.min()) / 2), float((y.max() + y.min()) / 2), half * 1.02)


def frame_of(positions: np.ndarray, x: np.ndarray, y: np.ndarray, tight: bool) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in the component's space around the points at ``positions``: all of them, or with
    ``tight`` their FRAME_QUANTILES (2nd to 98th percentiles) padded by FRAME_PAD (10%) of that span (a theme's
    stray papers, spread over the map, would otherwise keep the whole map in view; they stay drawn, a zoom-out
    away), else padded by 4%. The map adds a margin of its own in pixels (index.js, FIT_MARGIN_PX)."""
    if not positions.size:
        return -1.0, -1.0, 1.0, 1.0
    px, py = x[positions].astype(float), y[positions].astype(float)
    if tight and positions.size >= 50:
        (x0, x1), (y0, y1) = np.quantile(px, FRAME_QUANTILES), np.quantile(py, FRAME_QUANTILES)
        pad = FRAME_PAD * max(x1 - x0, y1 - y0, 0.05)
        return float(x0 - pad), float(y0 - pad), float(x1 + pad), float(y1 + pad)
    x0, x1, y0, y1 = px.min(), px.max(), py.min(), py.max()
    span = max(x1 - x0, y1 - y0, 0.05)
    pad_x, pad_y = (max(x1 - x0, span * 0.2)) * 0.04 + 0.01, (max(y1 - y0, span * 0.2)) * 0.04 + 0.01
    return float(x0 - pad_x), float(y0 - pad_y), float(x1 + pad_x), float(y1 + pad_y)


@dataclass(frozen=True)
class LegendEntry:
    """One colour group present among the matches: its ``name``, ``colour`` (#RRGGBB), ``count`` (matching papers)
    and ``subtitle`` (subtitles.group_subtitles; "" for none)."""

    name: str
    colour: str
    count: int
    subtitle: str = ""


@dataclass(frozen=True)
class LevelLabels:
    """The labels of one level: ``column`` ("theme", "topic" or "subtopic"), ``groups`` (topic_map.LabelGroups of the
    matches: keys, names, lines, font sizes, anchors in the component's space, colours, sizes; largest first) and
    ``parents`` (each label's topic id: a topic's own, a subtopic's topic, None for a theme)."""

    column: str
    groups: LabelGroups
    parents: tuple[int | None, ...]

    @property
    def level(self) -> int:
        """0 theme, 1 topic, 2 subtopic."""
        return LEVEL_COLUMNS.index(self.column)


@dataclass(frozen=True)
class MapModel:
    """What one view of the map shows, every array over the rows of the listing it was made from (n points, in the
    listing's order).

    Attributes
    ----------
    doc_ids : str array (n)
    x, y : float32 arrays (n)
        Positions in the component's space ([-1, 1]; ``norm`` maps the listing's coordinates there).
    norm : Normalisation
    matches : bool array (n)
        The points that pass the filters and the drilled theme or topic; the rest are context, drawn grey beneath.
    groups : object array (n)
        Each point's colour group name (topic_map.colour_groups; a drilled topic's papers by subtopic when
        topic_map.colours_subtopics).
    palette : {group name: #RRGGBB}
        Every group's colour, in legend order.
    emphasis : uint8 array (n)
        0 context (outside the matches, or another year than the highlighted one), 1 matching, 2 emphasised (an
        oral when coloured by decision).
    legend : tuple of LegendEntry
        The groups present among the matches, largest first, the grey groups last.
    labels : tuple of LevelLabels
        The label levels of the view (topic_map.label_levels), shallowest first.
    point_labels : object array (n)
        Each point's label group name at the first level ("" for outliers and context): what a figure that labels
        one level groups its labels by.
    frame : (x0, y0, x1, y1)
        The part of the component's space the view frames (:func:`frame_of`; tight when some points are context).
    """

    doc_ids: np.ndarray
    x: np.ndarray
    y: np.ndarray
    norm: Normalisation
    matches: np.ndarray
    groups: np.ndarray
    palette: dict[str, str]
    emphasis: np.ndarray
    legend: tuple[LegendEntry, ...]
    labels: tuple[LevelLabels, ...]
    point_labels: np.ndarray
    frame: tuple[float, float, float, float]

    @property
    def filtered(self) -> bool:
        """Whether some points are context (outside the filters or the drilled theme or topic)."""
        return not bool(self.matches.all())

    def colour_index(self) -> np.ndarray:
        """uint8 (n): each point's group's position in ``palette``, len(palette) (the context's grey) for context."""
        index_of = {name: position for position, name in enumerate(self.palette)}
        colours = pd.Series(self.groups, dtype=object).map(index_of).to_numpy(dtype=np.uint8)  # a hash lookup a point
        colours[~self.matches] = len(self.palette)
        return colours

    def point_colours(self) -> np.ndarray:
        """str (n): each point's colour, CONTEXT_COLOUR for context."""
        colours = pd.Series(self.groups, dtype=object).map(self.palette).to_numpy(dtype=object)
        colours[~self.matches] = CONTEXT_COLOUR
        return colours

    def present_groups(self) -> list[tuple[str, str]]:
        """[(group name, colour)] of the groups present among the matches, in palette order."""
        present = set(self.groups[self.matches].tolist())
        return [(name, colour) for name, colour in self.palette.items() if name in present]

    def to_map(self, x: float, y: float) -> tuple[float, float]:
        """A position of the component's space in the listing's map coordinates."""
        return x * self.norm.half + self.norm.centre_x, y * self.norm.half + self.norm.centre_y

    def map_frame(self) -> tuple[float, float, float, float]:
        """``frame`` in map coordinates, as (x_low, x_high, y_low, y_high)."""
        x0, y0 = self.to_map(self.frame[0], self.frame[1])
        x1, y1 = self.to_map(self.frame[2], self.frame[3])
        return x0, x1, y0, y1


def match_mask(doc_ids: np.ndarray, matching_ids: frozenset[str] | set[str] | np.ndarray) -> np.ndarray:
    """bool (n): which of ``doc_ids`` match: ``matching_ids`` as a bool array over them, or a set of doc_ids (looked
    up by hash: np.isin sorts object arrays, 0.3-0.9 s for 11,660 doc_ids on every filter change; pandas' isin
    takes 2 ms)."""
    if isinstance(matching_ids, np.ndarray):
        return matching_ids.astype(bool, copy=False)
    if len(matching_ids) < len(doc_ids):
        return pd.Series(doc_ids).isin(set(matching_ids)).to_numpy()
    return np.ones(len(doc_ids), bool)


def map_model(
    listing: pd.DataFrame,
    matching_ids: frozenset[str] | set[str] | np.ndarray,
    topics: pd.DataFrame,
    state: MapState,
    areas: Sequence[str] | None = None,
    topics_filtered: bool = False,
    subtopics: pd.DataFrame | None = None,
    point_groups: tuple[np.ndarray, dict[str, str]] | None = None,
    legend_subtitles: dict[str, str] | None = None,
    all_levels: bool = True,
    label_height_px: float = PLOT_HEIGHT_PX,
) -> MapModel:
    """The :class:`MapModel` of one view.

    ``listing``: every point (doc_id, x, y, topic, theme, subtopic, decision, primary_area, venue, year as present).
    ``matching_ids``: the doc_ids that pass the filters and the drilled theme or topic, or a bool array over
    ``listing``. ``areas``: the corpus's primary-area order (stable colours). ``topics_filtered``: the sidebar
    filters topics (labels start at topics). ``subtopics``: the cache's (TopicCache.subtopics; None: two levels).
    ``point_groups``: topic_map.colour_groups of ``listing`` in this colour mode when the caller keeps it (it
    depends on the listing and the mode alone; 20-30 ms at 11,660 papers); not modified. ``legend_subtitles``:
    subtitles.group_subtitles of ``topics`` in this colour mode when the caller keeps it (27 ms at 57 topics).
    ``all_levels``: False for a figure that labels one level (the first alone is made). ``label_height_px``: the
    plot height the labels' lines are chosen for (topic_map.label_groups). Raises ValueError for an unknown colour
    mode.
    """
    doc_ids = listing["doc_id"].astype(str).to_numpy()
    matches = match_mask(doc_ids, matching_ids)
    names, palette = (
        point_groups
        if point_groups is not None
        else colour_groups(listing, topics, state.colour_by, areas, state.highlight)
    )
    if subtopics is not None and colours_subtopics(state, subtopics):
        names, palette = drilled_subtopic_groups(listing, matches, (names, palette), state, subtopics)
    emphasis = np.where(matches & (names != OTHER_YEARS), 1, 0).astype(np.uint8)  # other years: small, as context
    if state.colour_by == "decision":
        emphasis[matches & np.isin(names, EMPHASISED)] = 2
    subtitles = group_subtitles(topics, state.colour_by) if legend_subtitles is None else legend_subtitles
    norm = normalisation(listing)
    x, y = norm.apply(listing["x"], listing["y"])
    levels = view_labels(listing, matches, x, y, topics, state, subtopics, topics_filtered, all_levels, label_height_px)
    first = levels[0].column if levels else LEVEL_COLUMNS[0]
    labels_now = point_labels(listing, topics, state, subtopics, first)
    labels_now[~matches] = ""
    return MapModel(
        doc_ids=doc_ids,
        x=x,
        y=y,
        norm=norm,
        matches=matches,
        groups=names,
        palette=dict(palette),
        emphasis=emphasis,
        legend=legend_of(names[matches], palette, subtitles),
        labels=tuple(levels),
        point_labels=labels_now,
        frame=frame_of(np.flatnonzero(matches), x, y, tight=not bool(matches.all())),
    )


def legend_of(names: np.ndarray, palette: dict[str, str], subtitles: dict[str, str]) -> tuple[LegendEntry, ...]:
    """The legend of the matching points' group ``names``: the groups of ``palette`` present, largest first, the
    grey groups (outliers, unknown, other years) last."""
    counts = pd.Series(names).value_counts()
    present = sorted(
        (name for name in palette if name in counts.index),
        key=lambda name: (name in GREY_GROUPS, -int(counts[name])),
    )
    return tuple(LegendEntry(name, palette[name], int(counts[name]), subtitles.get(name, "")) for name in present)


def view_labels(
    listing: pd.DataFrame,
    matches: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    topics: pd.DataFrame,
    state: MapState,
    subtopics: pd.DataFrame | None = None,
    topics_filtered: bool = False,
    all_levels: bool = True,
    height_px: float = PLOT_HEIGHT_PX,
) -> list[LevelLabels]:
    """The label levels of one view, shallowest first, each level's groups largest first.

    ``matches``: bool (n) over ``listing``; ``x``, ``y``: the listing's positions in the component's space (n), so
    the anchors are in that space. The levels are topic_map.label_levels': by zoom, every level from the first one
    (themes on the whole map, topics in a drilled theme or when ``topics_filtered``, subtopics in a drilled topic
    that has them) down to subtopics when the cache has them; a fixed level alone otherwise (and the first alone
    without ``all_levels``). Each label names its papers among the matches and points at their densest cell
    (topic_map.label_groups)."""
    columns = [LEVEL_COLUMNS[level] for level in label_levels(state, subtopics, topics_filtered)]
    columns = columns if all_levels else columns[:1]
    # The columns the labels need, with the coordinates already in the component's space (so label_groups' anchors
    # are the ones sent), not a copy of every column of the matches: 40 ms less per view at 11,660 papers.
    slim = pd.DataFrame({name: level_keys(listing, name) for name in dict.fromkeys(("theme", "topic", *columns))})
    slim["x"], slim["y"] = x.astype(float), y.astype(float)
    levels = []
    for column in columns:
        labelled = slim[matches & (point_labels(slim, topics, state, subtopics, column) != "")]
        groups = label_groups(labelled, topics, state, height_px, subtopics=subtopics, column=column)
        levels.append(LevelLabels(column, groups, tuple(parent_topics(column, groups.keys, subtopics))))
    return levels


def parent_topics(column: str, keys: list[int], subtopics: pd.DataFrame | None) -> list[int | None]:
    """The topic id of each label of ``column`` (keys: its ids): a topic's own, a subtopic's topic, None for a
    theme. The map hides a topic's label when a subtopic label of the same topic replaces it when zoomed in; told the
    topic, it no longer guesses it from the papers round the label's anchor (a subtopic's anchor can lie among
    another topic's papers, whose label then went missing)."""
    if column == "topic":
        return [int(key) for key in keys]
    if column == "subtopic" and subtopics is not None and not subtopics.empty:
        parent = dict(zip(subtopics["subtopic"].astype(int), subtopics["topic"].astype(int)))
        return [parent.get(int(key)) for key in keys]
    return [None] * len(keys)
