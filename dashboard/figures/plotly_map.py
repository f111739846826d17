"""The plotly map of a view: the page's map when ``$ATLAS_MAP_RENDERER=plotly`` (or without the WebGL component's
bundle), the map's image downloads and ``topic_atlas.Atlas.figure``. Pure.

It draws the view's :class:`dashboard.figures.map_model.MapModel` (the colour groups and palette, the label groups,
as every renderer of the map draws them) with plotly: one scattergl trace per colour group, grey groups beneath; the
search hits, the chosen paper and its similar papers on top. A figure that cannot follow the zoom labels one level
(the model's first). Labels go beside the points with leader lines (:mod:`dashboard.figures.label_layout`), so they
never cover a point or each other and never take the hover; each label says its group's name, and a label's border
has its group's colour when points are coloured by that group.

Figures are built from plain dicts with plotly's validation off (``go.Figure(..., _validate=False)``: validating
11,672 points in 30 traces costs more than a page rerun may take); every value put here is already of the type
plotly.js reads. Strings from the corpus go through :func:`dashboard.display.plotly_escape` before they reach the
figure (``&``, ``<``, ``>`` escaped; quotes kept, since plotly would show ``&quot;`` literally). The layout's
template is given as plotly's "plotly_white" template itself, as a dict (:func:`_template`): an unvalidated figure keeps
a template *name* as a string, on which ``write_html``, ``to_html`` and ``show`` raise AttributeError.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from dashboard.display import FONT_FAMILY, OUTLIER_LABEL, plotly_escape, shorten
from dashboard.figures.label_layout import place_labels, text_size_px
from dashboard.figures.map_model import MapModel, map_model
from dashboard.figures.topic_map import (
    CONTEXT_COLOUR,
    PLOT_HEIGHT_PX,
    UNKNOWN,
    Highlights,
    LabelGroups,
    MapState,
)

AREA_NAME_CHARS = 44
LEGEND_ROW_PX = 21
LEGEND_CHAR_PX = 6.6
HIGHLIGHT_STYLES = {  # kind -> (legend name, symbol, colour, size); drawn in this order, the chosen paper last
    "similar": ("similar papers", "circle-open", "#111111", 12),
    "search": ("search hits", "star", "#111111", 14),
    "chosen": ("chosen paper", "star", "#D62728", 20),
}
# A drilled theme is framed by its points' 2nd to 98th percentiles (stray papers far from the rest would otherwise keep
# the whole map in view); the whole map frames every point.
DRILL_QUANTILES = (0.02, 0.98)


def _annotations(
    groups: LabelGroups, extent: tuple[float, float, float, float], height_px: float
) -> tuple[list[dict[str, Any]], tuple[float, float], tuple[float, float]]:
    """Plotly annotations (label + leader line) of ``groups`` beside ``extent``, and the x and y ranges."""
    sizes = np.asarray([text_size_px(lines, font) for lines, font in zip(groups.lines, groups.font_px)]).reshape(-1, 2)
    placement = place_labels(np.asarray(groups.anchors, dtype=float).reshape(-1, 2), sizes, extent, height_px)
    annotations = []
    for index, (lines, font, anchor, colour) in enumerate(
        zip(groups.lines, groups.font_px, groups.anchors, groups.colours)
    ):
        left = placement.side[index] < 0
        annotations.append(
            {
                "x": anchor[0],
                "y": anchor[1],
                "xref": "x",
                "yref": "y",
                "ax": float(placement.text_xy[index, 0]),
                "ay": float(placement.text_xy[index, 1]),
                "axref": "x",
                "ayref": "y",
                "text": "<br>".join(plotly_escape(line) for line in lines),
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#777777",
                "standoff": 2,
                "xanchor": "right" if left else "left",
                "yanchor": "middle",
                "align": "right" if left else "left",
                "font": {"size": font, "color": "#1A1A1A", "family": FONT_FAMILY},
                "bgcolor": "rgba(255,255,255,0.92)",
                "bordercolor": colour,
                "borderwidth": 1.5 if colour != "#8A8A8A" else 0.8,
                "borderpad": 2,
                "captureevents": False,
            }
        )
    return annotations, placement.x_range, placement.y_range


def _marker_size(n_points: int) -> int:
    return 7 if n_points <= 2_000 else 5 if n_points <= 6_000 else 4


def _hover_texts(rows: pd.DataFrame) -> np.ndarray:
    if "hover" in rows.columns:
        return rows["hover"].to_numpy(dtype=object)
    return np.asarray([plotly_escape(str(title)) for title in rows["title"]], dtype=object)


def _points_trace(
    columns: Mapping[str, np.ndarray],
    positions: np.ndarray | None,
    name: str,
    colour: str,
    size: float,
    opacity: float,
    hover: bool,
    selected: set[str] | None,
) -> dict[str, Any]:
    """A scattergl trace of the rows at ``positions`` (all when None) of ``columns`` (doc_id, x, y, hover arrays)."""

    def take(column: str) -> np.ndarray:
        return columns[column] if positions is None else columns[column][positions]

    doc_ids = take("doc_id")
    trace: dict[str, Any] = {
        "type": "scattergl",
        "mode": "markers",
        "name": name,
        "x": take("x"),
        "y": take("y"),
        "customdata": doc_ids,
        "marker": {"size": size, "color": colour, "opacity": opacity, "line": {"width": 0}},
    }
    if hover:
        trace["hovertext"] = take("hover")
        trace["hoverinfo"] = "text"
    else:
        trace["hoverinfo"] = "skip"
    if selected:  # an empty selection draws nothing dimmed
        trace["selectedpoints"] = np.flatnonzero(pd.Series(doc_ids).isin(set(selected)).to_numpy()).tolist()
        trace["unselected"] = {"marker": {"opacity": 0.12}}
    return trace


def _point_columns(rows: pd.DataFrame, hover: bool = True) -> dict[str, np.ndarray]:
    columns = {
        "doc_id": rows["doc_id"].astype(str).to_numpy(dtype=object),
        "x": rows["x"].to_numpy(dtype=float),
        "y": rows["y"].to_numpy(dtype=float),
    }
    if hover:
        columns["hover"] = _hover_texts(rows)
    return columns


def _legend_name(name: str, count: int, colour_by: str) -> str:
    shown = shorten(name, AREA_NAME_CHARS) if colour_by == "primary_area" else shorten(name, 40)
    return f"{plotly_escape(shown)} ({count:,})"


def _legend_height(names: list[str], width_px: float = 1100) -> int:
    widths = [len(name) * LEGEND_CHAR_PX + 44 for name in names]
    rows, used = 1, 0.0
    for width in widths:
        if used + width > width_px and used > 0:
            rows, used = rows + 1, 0.0
        used += width
    return rows * LEGEND_ROW_PX + 12


def highlight_rows(documents: pd.DataFrame, highlights: Highlights) -> dict[str, pd.DataFrame]:
    """{kind: rows of ``documents`` (any superset of the shown papers) for the highlighted doc_ids}, in the ids'
    order."""
    by_id = documents.drop_duplicates("doc_id").set_index(documents["doc_id"].drop_duplicates().astype(str))
    rows = {}
    for kind, doc_ids in highlights.kinds().items():
        known = [doc_id for doc_id in doc_ids if doc_id in by_id.index]
        if known:
            rows[kind] = by_id.loc[known].reset_index(drop=True)
    return rows


def map_extent(rows: pd.DataFrame, drilled: bool = False) -> tuple[float, float, float, float]:
    """(x_low, x_high, y_low, y_high) the labels must stay outside of: every point, or for a drilled theme the
    central 96% in each axis, padded by 3%. (0, 1, 0, 1) for no rows."""
    if rows.empty:
        return 0.0, 1.0, 0.0, 1.0
    x, y = rows["x"].to_numpy(dtype=float), rows["y"].to_numpy(dtype=float)
    if not drilled or len(rows) < 50:
        return float(x.min()), float(x.max()), float(y.min()), float(y.max())
    (x_low, x_high), (y_low, y_high) = np.quantile(x, DRILL_QUANTILES), np.quantile(y, DRILL_QUANTILES)
    pad_x, pad_y = 0.03 * (x_high - x_low), 0.03 * (y_high - y_low)
    return float(x_low - pad_x), float(x_high + pad_x), float(y_low - pad_y), float(y_high + pad_y)


def map_figure(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    state: MapState,
    highlights: Mapping[str, pd.DataFrame] | None = None,
    selected_ids: Iterable[str] | None = None,
    context: pd.DataFrame | None = None,
    areas: Sequence[str] | None = None,
    height_px: int = PLOT_HEIGHT_PX,
    subtopics: pd.DataFrame | None = None,
) -> go.Figure:
    """The map of ``documents`` (the papers the view shows) in the view ``state``.

    ``documents``: doc_id, title, x, y, topic, theme (see :func:`dashboard.figures.topic_map.with_themes`), optional
    hover, decision, primary_area. ``topics``: topic, label, theme, theme_label. ``highlights``: {kind: rows with
    doc_id, x, y, title, hover} (see :func:`highlight_rows`). ``selected_ids``: a box or lasso selection to keep
    drawn (other points dimmed). ``context``: papers drawn beneath in light grey without hover (the rest of the map
    around a drilled theme). ``areas``: the corpus's primary-area order, for stable colours. ``subtopics``: the
    cache's subtopics (TopicCache.subtopics), for a drilled topic's or the subtopic level's labels and colours
    (without them: topics). One level is labelled (the model's first; "By zoom" labels its first level, since plotly
    cannot follow the zoom). Every point carries its doc_id in ``customdata``. The plot area is ``height_px`` high;
    the legend sits beneath it. Returns the Figure.
    """
    model = view_model(documents, topics, state, context, areas, height_px, subtopics)
    selected = {str(doc_id) for doc_id in selected_ids} if selected_ids is not None else None
    size = _marker_size(len(documents))
    traces: list[dict[str, Any]] = []
    if context is not None and not context.empty:
        columns = _point_columns(context, hover=False)
        trace = _points_trace(columns, None, "rest of the map", CONTEXT_COLOUR, max(3, size - 1), 0.6, False, None)
        traces.append(trace | {"showlegend": False})
    groups, legend_names = _group_traces(model, documents, state, size, selected)
    traces += groups
    marked, marked_names = _highlight_traces(highlights or {})
    traces += marked
    legend_names += marked_names
    # every drawn point, the outliers' too (they are hoverable): a label beside the labelled points alone covered
    # an outlier beyond them (seed 7 on the 300-paper slice)
    extent = map_extent(documents, drilled=state.theme is not None)
    annotations, x_range, y_range = _annotations(_labels_in_map(model), extent, height_px)
    layout = _layout(annotations, x_range, y_range, height_px, _legend_height(legend_names), state)
    if documents.empty:
        layout["annotations"] = [
            {
                "text": "No papers match the filters",
                "x": 0.5,
                "y": 0.5,
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
                "font": {"size": 15, "color": "#555555"},
            }
        ]
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def view_model(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    state: MapState,
    context: pd.DataFrame | None = None,
    areas: Sequence[str] | None = None,
    height_px: float = PLOT_HEIGHT_PX,
    subtopics: pd.DataFrame | None = None,
) -> MapModel:
    """The :class:`MapModel` of :func:`map_figure`'s arguments, labelling one level: its points are ``context``'s
    (not matching) then ``documents``' (matching), so the model's positions past len(context) are ``documents``'
    rows. A context row without a topic or theme is an outlier."""
    shown = documents.assign(doc_id=documents["doc_id"].astype(str))
    if context is None or context.empty:
        listing, matches = shown, np.ones(len(shown), bool)
    else:
        around = context.assign(doc_id=context["doc_id"].astype(str))
        listing = pd.concat([around, shown], ignore_index=True)
        for column in ("topic", "theme"):
            if column in listing.columns:
                listing[column] = listing[column].fillna(-1).astype("int64")
        matches = np.arange(len(listing)) >= len(around)
    return map_model(
        listing,
        matches,
        topics,
        state,
        areas,
        subtopics=subtopics,
        legend_subtitles={},  # the plotly legend has no subtitles
        all_levels=False,
        label_height_px=height_px,
    )


def _group_traces(
    model: MapModel, documents: pd.DataFrame, state: MapState, size: int, selected: set[str] | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """One trace per colour group of ``model`` present in ``documents`` (its matching rows, the model's last), grey
    groups beneath, the legend keeping the palette's order; and the groups' legend names."""
    names = model.groups[len(model.groups) - len(documents) :]
    columns = _point_columns(documents)
    legend_names = []
    grey_traces: list[dict[str, Any]] = []
    colour_traces: list[dict[str, Any]] = []
    for rank, (name, colour) in enumerate(model.palette.items()):
        positions = np.flatnonzero(names == name)
        if not positions.size:
            continue
        grey = name in (OUTLIER_LABEL, UNKNOWN)
        label = _legend_name(name, positions.size, state.colour_by)
        legend_names.append(label)
        trace = _points_trace(
            columns, positions, label, colour, max(3, size - 1) if grey else size, 0.45 if grey else 0.8, True, selected
        )
        (grey_traces if grey else colour_traces).append(trace | {"legendrank": rank})
    return grey_traces + colour_traces, legend_names


def _highlight_traces(highlights: Mapping[str, pd.DataFrame]) -> tuple[list[dict[str, Any]], list[str]]:
    """The highlighted papers' traces ({kind: rows}, drawn in HIGHLIGHT_STYLES' styles) and their legend names."""
    traces, names = [], []
    for kind, rows in highlights.items():
        name, symbol, colour, marker_size = HIGHLIGHT_STYLES[kind]
        traces.append(
            {
                "type": "scattergl",
                "mode": "markers",
                "name": f"{name} ({len(rows)})",
                "x": rows["x"].to_numpy(dtype=float),
                "y": rows["y"].to_numpy(dtype=float),
                "customdata": rows["doc_id"].astype(str).to_numpy(),
                "hovertext": _hover_texts(rows),
                "hoverinfo": "text",
                "marker": {
                    "size": marker_size,
                    "symbol": symbol,
                    "color": colour,
                    "line": {"width": 1.5, "color": "#FFFFFF" if symbol == "star" else colour},
                },
            }
        )
        names.append(f"{name} ({len(rows)})")
    return traces, names


def _labels_in_map(model: MapModel) -> LabelGroups:
    """The model's first level of labels with their anchors in map coordinates (the model keeps them in the
    component's space); no labels when the model has no level."""
    if not model.labels:
        return LabelGroups()
    groups = model.labels[0].groups
    anchors = [model.to_map(float(x), float(y)) for x, y in groups.anchors]
    return LabelGroups(groups.keys, groups.lines, groups.font_px, anchors, groups.colours, groups.names, groups.sizes)


@functools.cache
def _white_template() -> dict[str, Any]:
    return dict(pio.templates["plotly_white"].to_plotly_json())


def _template() -> dict[str, Any]:
    """Plotly's "plotly_white" template as a plotly dict (its ``data`` and ``layout``), a fresh copy per figure so
    that a change to one figure's template leaves the others alone; the template object is read once."""
    return copy.deepcopy(_white_template())


def _layout(
    annotations: list[dict[str, Any]],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    height_px: int,
    legend_px: int,
    state: MapState,
) -> dict[str, Any]:
    """The figure's layout: the plot area ``height_px`` high with the legend (``legend_px`` high) beneath it."""
    return {
        "template": _template(),
        "height": height_px + legend_px + 16,
        "margin": {"l": 4, "r": 4, "t": 4, "b": legend_px + 12},
        "showlegend": True,
        "legend": {
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": -0.005,
            "yanchor": "top",
            "font": {"size": 11},
            "itemsizing": "constant",
        },
        # Drag pans and the wheel zooms, as on a map; a click on a point selects it (Streamlit turns clicks into
        # selections only outside the lasso and box modes), and the lasso and box are in the toolbar.
        "dragmode": "pan",
        "clickmode": "event+select",
        "hovermode": "closest",
        "hoverlabel": {"bgcolor": "white", "font": {"size": 12, "family": FONT_FAMILY}, "align": "left"},
        "xaxis": {"range": list(x_range), "visible": False, "showgrid": False, "zeroline": False},
        "yaxis": {
            "range": list(y_range),
            "visible": False,
            "showgrid": False,
            "zeroline": False,
            "scaleanchor": "x",
            "scaleratio": 1,
        },
        "annotations": annotations,
        "font": {"family": FONT_FAMILY},
        "uirevision": f"map-{state.theme}-{state.topic}",  # the user's zoom kept across reruns; a drill resets it
    }
