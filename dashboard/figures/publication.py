"""Publication figures of exactly the map the page shows: a :class:`MapView` in, PNG / SVG / PDF bytes out.

A ``MapView`` is what the page draws (its points with their colours, the label group of each point at the current
label level, the highlighted points, the legend), plus a title and a caption naming corpus, date and filters. Two
renderers draw it, both offline:

- **DataMapPlot** (:func:`datamapplot_figure`, the default): ``datamapplot.create_plot`` with system fonts
  (DejaVu Sans), labels placed around the clusters with leader lines and never overlapping (its pylabeladjust
  step), points rasterised at 300 dpi while text, leader lines, legend and caption stay vector in SVG and PDF.
  Needs no browser.
- **plotly** (:func:`plotly_figure`): the same view as a plotly figure drawn by kaleido and Chromium, labels in
  boxes at their clusters (plotly has no label placement of its own), points in WebGL, embedded as an image in SVG
  and PDF.

Why DataMapPlot is the default: drawn side by side on the whole ICLR 2025 conference (11,670 points, 30 topic
labels; ``bench/publication.py``) its labels never overlap and never hide points, while the plotly figure's
boxed labels pile up in the crowded centre (one hides another, one is cut at the edge of a box); it draws
without Chromium, so one failure mode (a missing or hung browser) is gone; its SVG and PDF keep every label as
selectable text; and it is faster (6 s against 10 s for all three formats, on a busy two-core machine).

Every renderer here is a pure function of the view; the page runs them in a child process with a timeout
(:mod:`dashboard.export.download_bytes`), never in a server thread.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.display import OUTLIER_COLOUR, OUTLIER_TOPIC, plotly_escape, topic_colour, topic_labels

POINT_COLUMNS = ("x", "y", "colour", "label", "highlight")
FORMATS = ("png", "svg", "pdf")
MIME_TYPES = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
RENDERERS = ("datamapplot", "plotly")
DEFAULT_RENDERER = "datamapplot"
FONT_FAMILY = "DejaVu Sans"  # a system font (fonts-dejavu-core); matplotlib ships it too
# Chinese, Japanese and Korean glyphs in the DataMapPlot renderer: Noto Sans CJK (fonts-noto-cjk), the fallback after
# DejaVu Sans (matplotlib >= 3.6 falls back glyph by glyph along a list of families).
CJK_FAMILY = "Noto Sans CJK JP"
CJK_FONT_FILES = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"),
)
# The plotly renderer's fonts: DejaVu, then Noto CJK (fonts-noto-cjk) for Chinese, Japanese and Korean labels.
PLOTLY_FONT_FAMILY = "DejaVu Sans, Noto Sans CJK JP, Noto Sans CJK SC, sans-serif"
LEGEND_MARGIN_PX = 260
FIGURE_SIZE_IN = (12.0, 9.0)  # 4:3, the proportions of the map on the page
POINT_DPI = 300  # rasterised points in SVG/PDF, and the PNG's resolution
LEGEND_MAX_ENTRIES = 24
CAPTION_WRAP_CHARS = 150
LABEL_WRAP_CHARS = 18
HIGHLIGHT_EDGE = "#111111"
NEUTRAL_LABEL_COLOUR = "#333333"
_HEX_COLOUR = re.compile(r"#[0-9A-Fa-f]{6}")


@dataclass(frozen=True)
class MapView:
    """Exactly what one map on the page shows.

    Attributes
    ----------
    points : pd.DataFrame
        One row per point drawn, in drawing order, columns ``x``, ``y`` (map coordinates, float), ``colour``
        (hex ``#RRGGBB``), ``label`` (the point's label group at the current label level; ``""`` = unlabelled:
        outliers, papers outside a drilled-into theme) and ``highlight`` (bool: search hit, chosen or similar
        paper, drawn on top with a dark ring).
    legend : list of (name, colour)
        Legend entries in order, e.g. the decisions when points are coloured by decision; empty when the labels on
        the map name the colours (colour by topic).
    title : str
        One line above the map.
    caption : str
        Corpus, build date and filters, under the map.
    """

    points: pd.DataFrame
    legend: list[tuple[str, str]] = field(default_factory=list)
    title: str = "Topic Atlas"
    caption: str = ""


def check_view(view: MapView) -> None:
    """Raise ValueError naming the problem when ``view`` cannot be drawn: a missing column, a colour that is not
    ``#RRGGBB``, a non-finite coordinate, or a legend entry that is not (name, hex colour)."""
    missing = [column for column in POINT_COLUMNS if column not in view.points.columns]
    if missing:
        raise ValueError(f"MapView.points lacks columns {missing}; it needs {list(POINT_COLUMNS)}")
    bad = [colour for colour in view.points["colour"].astype(str).unique() if not _HEX_COLOUR.fullmatch(colour)]
    if bad:
        raise ValueError(f"MapView.points colours must be #RRGGBB, not {bad[:3]}")
    coordinates = view.points[["x", "y"]].to_numpy(dtype=float)
    if not np.isfinite(coordinates).all():
        raise ValueError("MapView.points has non-finite x or y")
    for entry in view.legend:
        if len(entry) != 2 or not _HEX_COLOUR.fullmatch(str(entry[1])):
            raise ValueError(f"MapView.legend entries are (name, '#RRGGBB'), not {entry!r}")


def save_view(view: MapView, folder: Path) -> None:
    """Write ``view`` into ``folder`` as ``points.parquet`` + ``view.json`` (for a render job; see
    :func:`load_view`)."""
    view.points[list(POINT_COLUMNS)].to_parquet(folder / "points.parquet", index=False)
    meta = {"legend": [list(entry) for entry in view.legend], "title": view.title, "caption": view.caption}
    (folder / "view.json").write_text(json.dumps(meta), encoding="utf-8")


def load_view(folder: Path) -> MapView:
    """The MapView :func:`save_view` wrote into ``folder``."""
    meta = json.loads((folder / "view.json").read_text(encoding="utf-8"))
    points = pd.read_parquet(folder / "points.parquet")
    return MapView(
        points=points,
        legend=[(str(name), str(colour)) for name, colour in meta["legend"]],
        title=str(meta["title"]),
        caption=str(meta["caption"]),
    )


def label_anchors(points: pd.DataFrame) -> pd.DataFrame:
    """Where each label group sits: per non-empty ``label``, the mean x/y of its points, its size and its
    dominant colour (the colour of most of its points). Columns label, x, y, size, colour; largest group first."""
    labelled = points[points["label"].astype(str) != ""]
    if labelled.empty:
        return pd.DataFrame({"label": [], "x": [], "y": [], "size": [], "colour": []})
    groups = labelled.groupby("label", sort=True)
    anchors = groups[["x", "y"]].mean()
    anchors["size"] = groups.size()
    anchors["colour"] = groups["colour"].agg(lambda colours: colours.value_counts().index[0])
    return anchors.reset_index().sort_values(["size", "label"], ascending=[False, True], ignore_index=True)


def _label_colours(view: MapView, anchors: pd.DataFrame) -> dict[str, str]:
    """{label: colour of its text and leader line}: the group's dominant colour when colours stand for the label
    groups (no legend), else dark grey (a topic label over points coloured by decision must not claim the colour
    of one decision)."""
    return {
        str(row.label): (NEUTRAL_LABEL_COLOUR if view.legend else str(row.colour))
        for row in anchors.itertuples(index=False)
    }


def _wrapped(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(" ".join(str(text).split()), width)) if text else ""


def datamapplot_figure(view: MapView, figsize: tuple[float, float] = FIGURE_SIZE_IN):
    """The view drawn by ``datamapplot.create_plot`` as a matplotlib Figure (Agg canvas, nothing shown on screen).

    Points keep their own colours (``marker_color_array``) and are rasterised (``set_rasterized``); each label
    group is labelled at its mean position with a leader line, placed by DataMapPlot so no two labels overlap;
    highlighted points are drawn on top, as vector rings. Raises ValueError for an invalid view
    (:func:`check_view`). The caller closes the figure (``matplotlib.pyplot.close``).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import datamapplot
    from matplotlib.lines import Line2D

    check_view(view)
    points = view.points
    noise = "\x00unlabelled"  # never a real label
    labels = np.where(points["label"].astype(str) == "", noise, points["label"].astype(str)).astype(object)
    anchors = label_anchors(points)
    label_colours = {noise: OUTLIER_COLOUR, **_label_colours(view, anchors)}
    coordinates = points[["x", "y"]].to_numpy(dtype=np.float32)
    families = matplotlib_font_families()
    figure, axes = datamapplot.create_plot(
        coordinates,
        labels,
        title=view.title or None,
        noise_label=noise,
        noise_color=OUTLIER_COLOUR,
        label_color_map=label_colours,
        marker_color_array=points["colour"].astype(str).to_numpy(),
        color_label_text=not view.legend,  # DataMapPlot darkens the group colour for the text
        color_label_arrows=True,
        label_wrap_width=LABEL_WRAP_CHARS,
        figsize=figsize,
        dpi=100,
        font_family=families,  # matplotlib takes a list (glyph fallback); DataMapPlot passes it through
        use_system_fonts=True,
        add_glow=False,  # 14-18 s for 12,000 points against about 1 s without (issue 12's measurement)
        point_size=_point_size(len(points)),
        alpha=0.8,
        dynamic_label_size=len(anchors) >= 2,  # sizes by cluster size; DataMapPlot 0.7.3 fails on one label
        label_font_size=None if len(anchors) >= 2 else 14.0,
        min_font_size=7.0,  # DataMapPlot's 4 pt is unreadable in print
        max_font_size=16.0,
        min_font_weight=400,
        title_keywords={"fontsize": 18, "fontfamily": families, "fontweight": 700},
        label_over_points=not _ring_placement_possible(anchors),
    )
    for collection in axes.collections:
        collection.set_rasterized(True)
    axes.set_frame_on(False)
    highlighted = points[points["highlight"].astype(bool)]
    if not highlighted.empty:
        axes.scatter(
            highlighted["x"],
            highlighted["y"],
            s=60,
            facecolors=highlighted["colour"].tolist(),
            edgecolors=HIGHLIGHT_EDGE,
            linewidths=1.2,
            zorder=5,
        )
    if view.legend:
        handles = [
            Line2D(
                [], [], linestyle="", marker="o", markersize=7, markerfacecolor=colour, markeredgewidth=0, label=name
            )
            for name, colour in view.legend[:LEGEND_MAX_ENTRIES]
        ]
        axes.legend(
            handles=handles,
            loc="lower left",
            frameon=False,
            fontsize=9,
            ncols=1 if len(handles) <= 8 else 2,
            prop={"family": families, "size": 9},
        )
    if view.caption:
        figure.text(
            0.01,
            0.0,
            _wrapped(view.caption, CAPTION_WRAP_CHARS),
            ha="left",
            va="top",
            fontsize=9,
            color="#444444",
            fontfamily=families,
        )
    return figure


def matplotlib_font_families() -> list[str]:
    """The font families the DataMapPlot renderer asks matplotlib for: [FONT_FAMILY, CJK_FAMILY] when a Noto Sans CJK
    file of CJK_FONT_FILES is installed, else [FONT_FAMILY]. matplotlib lists the system's fonts once, in a cache file
    it does not refresh, so a font installed after that (``apt-get install fonts-noto-cjk`` on a machine that had
    already run matplotlib) is registered here with ``font_manager.fontManager.addfont``, its public API."""
    from matplotlib import font_manager

    known = {entry.name for entry in font_manager.fontManager.ttflist}
    if CJK_FAMILY not in known:
        for path in CJK_FONT_FILES:
            if path.is_file():
                font_manager.fontManager.addfont(str(path))
        known = {entry.name for entry in font_manager.fontManager.ttflist}
    return [FONT_FAMILY, CJK_FAMILY] if CJK_FAMILY in known else [FONT_FAMILY]


def _ring_placement_possible(anchors: pd.DataFrame) -> bool:
    """Whether DataMapPlot can place the labels on rings around the map: it points each label away from the mean
    of all label positions, which is undefined for a label sitting exactly there (one label group, or a label at
    the centre); those maps get their labels over the points instead."""
    if len(anchors) < 2:
        return False
    positions = anchors[["x", "y"]].to_numpy(dtype=float)
    offsets = np.linalg.norm(positions - positions.mean(axis=0), axis=1)
    return bool((offsets > 1e-9 * max(1.0, float(np.abs(positions).max()))).all())


def _point_size(n_points: int) -> float:
    """Marker area in points² for DataMapPlot's matplotlib scatter: larger for small maps, so a handful of
    papers stays visible."""
    if n_points <= 200:
        return 30.0
    if n_points <= 2_000:
        return 8.0
    return 2.0


def plotly_figure(view: MapView, width: int = 1800, height: int = 1350) -> go.Figure:
    """The view as a plotly Figure for kaleido: one WebGL trace of the points in their colours, highlighted
    points on top with dark rings, each label group's label in a box at its mean position, the legend entries as
    legend-only traces, the title above and the caption below. Raises ValueError for an invalid view."""
    check_view(view)
    points = view.points
    figure = go.Figure()
    figure.add_trace(
        go.Scattergl(
            x=points["x"].to_numpy(),
            y=points["y"].to_numpy(),
            mode="markers",
            showlegend=False,
            hoverinfo="skip",
            marker={
                "color": points["colour"].astype(str).tolist(),
                "size": 7 if len(points) <= 2_000 else 4,
                "opacity": 0.8,
                "line": {"width": 0},
            },
        )
    )
    highlighted = points[points["highlight"].astype(bool)]
    if not highlighted.empty:
        figure.add_trace(
            go.Scattergl(
                x=highlighted["x"].to_numpy(),
                y=highlighted["y"].to_numpy(),
                mode="markers",
                showlegend=False,
                hoverinfo="skip",
                marker={
                    "color": highlighted["colour"].astype(str).tolist(),
                    "size": 12,
                    "line": {"width": 2, "color": HIGHLIGHT_EDGE},
                },
            )
        )
    for name, colour in view.legend[:LEGEND_MAX_ENTRIES]:
        figure.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="markers", name=plotly_escape(name), marker={"color": colour, "size": 10}
            )
        )
    anchors = label_anchors(points)
    text_colours = _label_colours(view, anchors)
    figure.update_layout(
        annotations=[
            dict(
                x=row.x,
                y=row.y,
                text="<br>".join(plotly_escape(line) for line in textwrap.wrap(str(row.label), LABEL_WRAP_CHARS)),
                showarrow=False,
                font={"size": 12, "color": text_colours[str(row.label)], "family": PLOTLY_FONT_FAMILY},
                bgcolor="rgba(255,255,255,0.8)",
                borderpad=2,
            )
            for row in anchors.itertuples(index=False)
        ]
    )
    if view.caption:
        figure.add_annotation(
            text="<br>".join(plotly_escape(line) for line in textwrap.wrap(view.caption, CAPTION_WRAP_CHARS)),
            x=0,
            y=0,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="top",
            yshift=-8,
            showarrow=False,
            align="left",
            font={"size": 11, "color": "#555555", "family": PLOTLY_FONT_FAMILY},
        )
    axis = {"showgrid": False, "zeroline": False, "showticklabels": False, "title": None, "showline": False}
    figure.update_layout(
        template="plotly_white",
        width=width,
        height=height,
        font={"family": PLOTLY_FONT_FAMILY},
        title={"text": plotly_escape(view.title), "x": 0.01, "xanchor": "left", "font": {"size": 22}},
        # The legend right of the plot area, outside it: above the plot it printed over the title.
        margin={"l": 20, "r": LEGEND_MARGIN_PX if view.legend else 20, "t": 70, "b": 90},
        showlegend=bool(view.legend),
        legend={"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.02},
        xaxis=axis,
        yaxis={**axis, "scaleanchor": "x", "scaleratio": 1},
    )
    return figure


def checked_format(image_format: str) -> str:
    """``image_format`` in lower case; raises ValueError unless it is png, svg or pdf."""
    image_format = str(image_format).lower()
    if image_format not in FORMATS:
        raise ValueError(f"image format must be one of {FORMATS}, not {image_format!r}")
    return image_format


# --- a MapView of today's map, until the map view provides its own
# (dashboard/figures/topic_map.py: publication_points) ---


def filter_note(
    topic_names: Iterable[str] = (),
    query: str = "",
    decisions: Iterable[str] = (),
    n_selected: int = 0,
    areas: Iterable[str] = (),
    theme: str = "",
) -> str:
    """One line naming the filters in force, e.g. 'theme: reasoning; topics: LLM agents, diffusion; search "graph";
    decision: Oral; primary area: optimization', or 'no filters'."""
    parts = [f"theme: {theme}"] if theme else []
    names = [str(name) for name in topic_names]
    if names:
        parts.append(("topic: " if len(names) == 1 else "topics: ") + ", ".join(names))
    if query.strip():
        parts.append(f'search "{query.strip()}"')
    chosen = [str(decision) for decision in decisions]
    if chosen:
        parts.append(("decision: " if len(chosen) == 1 else "decisions: ") + ", ".join(chosen))
    chosen_areas = [str(area) for area in areas]
    if chosen_areas:
        parts.append(("primary area: " if len(chosen_areas) == 1 else "primary areas: ") + ", ".join(chosen_areas))
    if n_selected:
        parts.append(f"{n_selected:,} papers selected on the map")
    return "; ".join(parts) or "no filters"


def caption_text(
    manifest: Mapping[str, object], corpus: str, n_points: int, filters: str, today: date | None = None
) -> str:
    """The figure's caption: 'N papers of CORPUS (built YYYY-MM-DD) · filters: ... · drawn YYYY-MM-DD by Topic
    Atlas'."""
    built = str(manifest.get("created_at", ""))[:10]
    drawn = (today or date.today()).isoformat()
    built_part = f" (built {built})" if built else ""
    papers = "1 paper" if n_points == 1 else f"{n_points:,} papers"
    return f"{papers} of {corpus}{built_part} · filters: {filters} · drawn {drawn} by Topic Atlas"


def map_view_from_documents(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    *,
    colour_by: str = "Topic",
    decision_colours: Mapping[str, str] | None = None,
    title: str = "Topic Atlas",
    caption: str = "",
    highlight_ids: Iterable[str] = (),
) -> MapView:
    """A MapView of the map as the page draws it today: ``documents`` (the papers shown; columns doc_id, x, y,
    topic, and decision when ``colour_by == "Decision"``) coloured by topic (the map's palette) or by decision
    (``decision_colours``, "Unknown" for missing ones), each labelled with its topic's label, outliers unlabelled.
    Legend: the decisions present, when coloured by decision. ``highlight_ids``: doc_ids drawn highlighted."""
    labels = topic_labels(topics)
    topic_ids = documents["topic"].astype(int).to_numpy()
    if colour_by == "Decision":
        colours_by_decision = dict(decision_colours or {})
        known = (
            documents["decision"].where(documents["decision"].isin(list(colours_by_decision)), "Unknown")
            if "decision" in documents.columns
            else pd.Series("Unknown", index=documents.index)
        )
        colours = known.map(lambda decision: colours_by_decision.get(decision, OUTLIER_COLOUR)).tolist()
        present = set(known)
        legend = [(decision, colour) for decision, colour in colours_by_decision.items() if decision in present]
    else:
        colours = [topic_colour(topic) for topic in topic_ids]
        legend = []
    highlighted = set(map(str, highlight_ids))
    points = pd.DataFrame(
        {
            "x": documents["x"].astype(float).to_numpy(),
            "y": documents["y"].astype(float).to_numpy(),
            "colour": [str(colour).upper() for colour in colours],
            "label": ["" if topic == OUTLIER_TOPIC else labels.get(int(topic), str(topic)) for topic in topic_ids],
            "highlight": [str(doc_id) in highlighted for doc_id in documents["doc_id"]],
        }
    )
    return MapView(points=points, legend=legend, title=title, caption=caption)
