"""Publication figures of exactly the map the page shows: a :class:`MapView` in, PNG / SVG / PDF bytes out.

A ``MapView`` is what the page draws (its points with their colours, the label group of each point at the current
label level, the highlighted points, the legend), plus a title and a caption naming corpus, date and filters; the
page's view is made from the view's :class:`dashboard.figures.map_model.MapModel` (:func:`view_of_map`), the model
every renderer of the map draws. matplotlib draws it (:func:`matplotlib_figure`), offline, with one layout
(:mod:`dashboard.figures.publication_layout`): each label group's name beside the points in two columns, joined to
the densest spot of its cluster by a leader line, so no label lies over a point, another label or the legend; the
legend (only when the labels do not name the colours) right of the plot area; the title above and the caption
beneath. DejaVu Sans with Noto Sans CJK as glyph fallback; points rasterised at 300 dpi while text, leader lines,
legend and caption stay vector (selectable text) in SVG and PDF. It needs no browser. A drilled topic's view is
framed as the page's map frames it (``MapView.frame``), its papers coloured and labelled by their subtopics.

There is one renderer. A second, plotly drawn by kaleido and Chromium from the same layout, was removed (issue 39):
it drew the same figure 4-7 times slower (7.5-9.5 s against 1.1-1.8 s for PNG + SVG + PDF of the whole
conference, ``bench/publication.py``), embedded the points as one image in its SVG and PDF where matplotlib keeps
the text as text, needed Chromium on the server, and no export format needed it: PNG, SVG and PDF all come from
matplotlib (docs/decisions/publication-renderer.md). The page's other charts still go through kaleido
(:mod:`dashboard.export.kaleido_images`).

The figure used to be drawn by DataMapPlot (``datamapplot.create_plot``): its label placement took 25-50 s for the
whole conference's 55 topic labels on two busy cores (``bench/publication.py``), its legend sat inside the plot area
and its leader lines ended at the mean of a theme's scattered papers, often empty space. The renderer is a pure
function of the view; the page runs it in a child process with a timeout
(:mod:`dashboard.export.download_bytes`), never in a server thread.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard.display import OUTLIER_COLOUR, OUTLIER_TOPIC, topic_colour, topic_labels
from dashboard.figures import map_model, topic_map
from dashboard.figures.publication_layout import LINE_SPACING, LabelLayout, font_measure, label_anchors, layout_labels
from pipeline.runtime.parquet import read_frame

POINT_COLUMNS = ("x", "y", "colour", "label", "highlight")
FORMATS = ("png", "svg", "pdf")
MIME_TYPES = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
FONT_FAMILY = "DejaVu Sans"  # a system font (fonts-dejavu-core); matplotlib ships it too
# Chinese, Japanese and Korean glyphs in the DataMapPlot renderer: Noto Sans CJK (fonts-noto-cjk), the fallback after
# DejaVu Sans (matplotlib >= 3.6 falls back glyph by glyph along a list of families).
CJK_FAMILY = "Noto Sans CJK JP"
CJK_FONT_FILES = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"),
)
FIGURE_SIZE_IN = (12.0, 9.0)  # 4:3, the proportions of the map on the page
MARGIN_IN = 0.3
TITLE_BAND_IN = 0.75
CAPTION_LINE_IN = 0.17  # a 9 pt caption line
LEGEND_GAP_IN = 0.25
LEADER_GAP_PT = 2.0  # between a label and its leader line
POINT_DPI = 300  # rasterised points in SVG/PDF, and the PNG's resolution
LEGEND_MAX_ENTRIES = 24
CAPTION_WRAP_CHARS = 150
TITLE_WRAP_CHARS = 90
HIGHLIGHT_EDGE = "#111111"
NEUTRAL_LABEL_COLOUR = "#333333"
NEUTRAL_LINE_COLOUR = "#888888"
FRAME_ANCHOR_PAD = 0.03  # room round a label's anchor that a drilled topic's frame is widened to hold
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
    frame : (x_low, x_high, y_low, y_high) or None
        The part of the map the figure shows, in map coordinates, as the page's map frames a drilled topic; the
        points outside it are not drawn. None: every point.
    """

    points: pd.DataFrame
    legend: list[tuple[str, str]] = field(default_factory=list)
    title: str = "Topic Atlas"
    caption: str = ""
    frame: tuple[float, float, float, float] | None = None

    @functools.cached_property
    def shown_points(self) -> pd.DataFrame:
        """The rows of ``points`` the figure draws: those inside ``frame`` (every row without one)."""
        if self.frame is None:
            return self.points
        x_low, x_high, y_low, y_high = self.frame
        x, y = self.points["x"].astype(float), self.points["y"].astype(float)
        return self.points[x.between(x_low, x_high) & y.between(y_low, y_high)].reset_index(drop=True)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A short fingerprint (16 hex digits of SHA-256) of everything the figure shows: points, legend, title and
        caption; computed once per view. The page's Downloads tab names a drawn figure by it."""
        digest = hashlib.sha256()
        digest.update(pd.util.hash_pandas_object(self.points[list(POINT_COLUMNS)], index=False).to_numpy().tobytes())
        digest.update(repr((self.legend, self.title, self.caption, self.frame)).encode("utf-8"))
        return digest.hexdigest()[:16]


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
    if view.frame is not None:
        frame = np.asarray(view.frame, dtype=float)
        if frame.shape != (4,) or not np.isfinite(frame).all() or frame[0] > frame[1] or frame[2] > frame[3]:
            raise ValueError(f"MapView.frame is (x_low, x_high, y_low, y_high), finite and ordered, not {view.frame!r}")


def save_view(view: MapView, folder: Path) -> None:
    """Write ``view`` into ``folder`` as ``points.parquet`` + ``view.json`` (for a render job; see
    :func:`load_view`)."""
    view.points[list(POINT_COLUMNS)].to_parquet(folder / "points.parquet", index=False)
    meta = {
        "legend": [list(entry) for entry in view.legend],
        "title": view.title,
        "caption": view.caption,
        "frame": None if view.frame is None else [float(value) for value in view.frame],
    }
    (folder / "view.json").write_text(json.dumps(meta), encoding="utf-8")


def load_view(folder: Path) -> MapView:
    """The MapView :func:`save_view` wrote into ``folder``."""
    meta = json.loads((folder / "view.json").read_text(encoding="utf-8"))
    points = read_frame(folder / "points.parquet")
    frame = meta.get("frame")
    return MapView(
        points=points,
        legend=[(str(name), str(colour)) for name, colour in meta["legend"]],
        title=str(meta["title"]),
        caption=str(meta["caption"]),
        frame=None if frame is None else (float(frame[0]), float(frame[1]), float(frame[2]), float(frame[3])),
    )


def _darker(colour: str, share: float = 0.45) -> str:
    """``colour`` (#RRGGBB) mixed with ``share`` of black: label text in its group's hue, readable on white (a light
    yellow group colour is not)."""
    rgb = [int(colour[index : index + 2], 16) for index in (1, 3, 5)]
    return "#" + "".join(f"{round(value * (1 - share)):02X}" for value in rgb)


def label_colours(view: MapView, labels: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(text colours, leader-line colours) of ``labels`` (a LabelLayout's rows): the group's colour, darkened for
    the text, when the colours stand for the label groups (no legend); else dark and mid grey (a topic's label over
    points coloured by decision must not claim the colour of one decision)."""
    if view.legend:
        return [NEUTRAL_LABEL_COLOUR] * len(labels), [NEUTRAL_LINE_COLOUR] * len(labels)
    colours = labels["colour"].astype(str).tolist()
    return [_darker(colour) for colour in colours], colours


def _wrapped(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(" ".join(str(text).split()), width)) if text else ""


def caption_lines(view: MapView, layout: LabelLayout) -> str:
    """The caption under the figure, wrapped, with a note when some label groups had no room."""
    caption = view.caption
    if layout.n_unlabelled:
        caption += f" · the {layout.n_unlabelled} smallest of {layout.n_groups} groups are not labelled (no room)"
    return _wrapped(caption, CAPTION_WRAP_CHARS)


@dataclass(frozen=True)
class FrameGeometry:
    """Where the parts of a figure of ``size_in`` (width, height inches) go, in inches from its bottom-left corner:
    the plot area ``plot`` (left, bottom, width, height), and the legend's top-right corner ``legend_at``."""

    size_in: tuple[float, float]
    plot: tuple[float, float, float, float]
    legend_at: tuple[float, float]


def frame_geometry(
    size_in: tuple[float, float], has_title: bool, n_caption_lines: int, legend_width_in: float
) -> FrameGeometry:
    """The plot area of a figure: below the title's band, above the caption's, left of the legend (outside the plot
    area, so no label or point ever lies under it)."""
    width, height = size_in
    top = TITLE_BAND_IN if has_title else MARGIN_IN
    bottom = MARGIN_IN + CAPTION_LINE_IN * n_caption_lines
    right = MARGIN_IN + (legend_width_in + LEGEND_GAP_IN if legend_width_in else 0.0)
    plot = (MARGIN_IN, bottom, max(width - MARGIN_IN - right, 1.0), max(height - top - bottom, 1.0))
    return FrameGeometry(size_in, plot, (width - MARGIN_IN, height - top))


def matplotlib_figure(view: MapView, figsize: tuple[float, float] = FIGURE_SIZE_IN):
    """The view drawn with matplotlib as a Figure (Agg canvas, no pyplot state): points rasterised (unlabelled ones,
    outliers and the grey context, smaller and beneath), each label group's name beside the points with a leader line
    (:mod:`dashboard.figures.publication_layout`), highlighted points ringed, the title above, the legend right of the
    plot area and the caption beneath it; text in DejaVu Sans with Noto Sans CJK as glyph fallback. Raises ValueError
    for an invalid view (:func:`check_view`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    check_view(view)
    families = matplotlib_font_families()
    figure = Figure(figsize=figsize, dpi=100, facecolor="white")
    legend = _matplotlib_legend(figure, view.legend, families) if view.legend else None
    canvas = FigureCanvasAgg(figure)
    legend_width = legend.get_window_extent(canvas.get_renderer()).width / figure.dpi if legend else 0.0
    caption_guess = _wrapped(view.caption, CAPTION_WRAP_CHARS).count("\n") + 2 if view.caption else 0
    geometry = frame_geometry(figsize, bool(view.title), caption_guess, legend_width)
    left, bottom, width, height = geometry.plot
    layout = layout_labels(view.shown_points, width * 72, height * 72, font_measure(families))
    axes = figure.add_axes((left / figsize[0], bottom / figsize[1], width / figsize[0], height / figsize[1]))
    axes.set_axis_off()
    axes.set_xlim(*layout.x_range)
    axes.set_ylim(*layout.y_range)
    _matplotlib_points(axes, view.shown_points)
    _matplotlib_labels(axes, view, layout, families, width * 72)
    if legend is not None:
        legend.set_bbox_to_anchor(
            (geometry.legend_at[0] / figsize[0], geometry.legend_at[1] / figsize[1]), transform=figure.transFigure
        )
    if view.title:
        figure.text(
            MARGIN_IN / figsize[0],
            1 - 0.22 / figsize[1],
            _wrapped(view.title, TITLE_WRAP_CHARS),
            ha="left",
            va="top",
            fontsize=17,  # regular weight: a bold face would be one more font to embed in the PDF (0.5-1 s)
            fontfamily=families,
            parse_math=False,
        )
    caption = caption_lines(view, layout)
    if caption:
        figure.text(
            MARGIN_IN / figsize[0],
            (bottom - 0.12) / figsize[1],
            caption,
            ha="left",
            va="top",
            fontsize=9,
            color="#444444",
            fontfamily=families,
            parse_math=False,
        )
    return figure


def _matplotlib_legend(figure, legend: list[tuple[str, str]], families: list[str]):
    from matplotlib.lines import Line2D

    entries = legend[:LEGEND_MAX_ENTRIES]
    handles = [
        Line2D([], [], linestyle="", marker="o", markersize=7, markerfacecolor=colour, markeredgewidth=0, label=name)
        for name, colour in entries
    ]
    if len(legend) > len(entries):
        handles.append(Line2D([], [], linestyle="", label=f"… and {len(legend) - len(entries)} more"))
    return figure.legend(
        handles=handles, loc="upper right", frameon=False, prop={"family": families, "size": 9}, borderaxespad=0
    )


def _matplotlib_points(axes, points: pd.DataFrame) -> None:
    """The points, rasterised: unlabelled ones (outliers, grey context) smaller and beneath, then the labelled ones,
    then the highlighted ones ringed, as vectors."""
    size = _point_size(len(points))
    labelled = (points["label"].astype(str) != "").to_numpy()
    colours = points["colour"].astype(str).to_numpy()
    x, y = points["x"].to_numpy(dtype=float), points["y"].to_numpy(dtype=float)
    for members, scale, alpha in ((~labelled, 0.6, 0.7), (labelled, 1.0, 0.85)):
        if members.any():
            axes.scatter(
                x[members], y[members], s=size * scale, c=colours[members], linewidths=0, alpha=alpha, rasterized=True
            )
    highlighted = points["highlight"].astype(bool).to_numpy()
    if highlighted.any():
        axes.scatter(
            x[highlighted],
            y[highlighted],
            s=max(size * 6, 30),
            c=colours[highlighted],
            edgecolors=HIGHLIGHT_EDGE,
            linewidths=1.0,
            zorder=5,
        )


def _matplotlib_labels(axes, view: MapView, layout: LabelLayout, families: list[str], width_pt: float) -> None:
    """Each label's text at its place and one collection of leader lines (an annotation's arrow clipped to its text
    box cost 25 ms per label in the PDF)."""
    from matplotlib.collections import LineCollection

    rows = layout.labels
    texts, lines = label_colours(view, rows)
    gap = LEADER_GAP_PT * (layout.x_range[1] - layout.x_range[0]) / width_pt  # data units
    for row, text_colour in zip(rows.itertuples(index=False), texts):
        left = row.side < 0
        axes.text(
            row.text_x,
            row.text_y,
            "\n".join(row.lines),
            ha="right" if left else "left",
            va="center",
            multialignment="right" if left else "left",
            fontsize=row.font_pt,
            color=text_colour,
            fontfamily=families,
            linespacing=LINE_SPACING,
            parse_math=False,
            zorder=4,
        )
    if len(rows):
        starts = np.column_stack([rows["text_x"] + gap * rows["side"], rows["text_y"]])
        ends = rows[["anchor_x", "anchor_y"]].to_numpy(dtype=float)
        segments = [[tuple(start), tuple(end)] for start, end in zip(starts, ends)]
        axes.add_collection(LineCollection(segments, colors=lines, linewidths=0.6, zorder=3))


def matplotlib_font_families() -> list[str]:
    """The font families the matplotlib renderer asks for: [FONT_FAMILY, CJK_FAMILY] when a Noto Sans CJK file of
    CJK_FONT_FILES is installed, else [FONT_FAMILY]. matplotlib lists the system's fonts once, in a cache file it does
    not refresh, so a font installed after that (``apt-get install fonts-noto-cjk`` on a machine that had already run
    matplotlib) is registered here with ``font_manager.fontManager.addfont``, its public API."""
    from matplotlib import font_manager

    known = {entry.name for entry in font_manager.fontManager.ttflist}
    if CJK_FAMILY not in known:
        for path in CJK_FONT_FILES:
            if path.is_file():
                font_manager.fontManager.addfont(str(path))
        known = {entry.name for entry in font_manager.fontManager.ttflist}
    return [FONT_FAMILY, CJK_FAMILY] if CJK_FAMILY in known else [FONT_FAMILY]


def _point_size(n_points: int) -> float:
    """Marker area in points² for the matplotlib scatter: larger for small maps, so a handful of papers stays
    visible."""
    if n_points <= 200:
        return 30.0
    if n_points <= 2_000:
        return 8.0
    if n_points <= 20_000:
        return 2.5
    return 1.2


def checked_format(image_format: str) -> str:
    """``image_format`` in lower case; raises ValueError unless it is png, svg or pdf."""
    image_format = str(image_format).lower()
    if image_format not in FORMATS:
        raise ValueError(f"image format must be one of {FORMATS}, not {image_format!r}")
    return image_format


def filter_note(
    topic_names: Iterable[str] = (),
    query: str = "",
    decisions: Iterable[str] = (),
    n_selected: int = 0,
    areas: Iterable[str] = (),
    theme: str = "",
    drilled_topic: str = "",
) -> str:
    """One line naming the filters in force, e.g. 'theme: reasoning; drilled topic: LLM agents; topics: LLM agents,
    diffusion; search "graph"; decision: Oral; primary area: optimization', or 'no filters'. ``theme`` and
    ``drilled_topic``: the names of the theme and topic the map is drilled into."""
    parts = [f"theme: {theme}"] if theme else []
    if drilled_topic:
        parts.append(f"drilled topic: {drilled_topic}")
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


def map_title(
    corpus: str,
    state: topic_map.MapState,
    theme_name: str = "",
    topic_name: str = "",
    subtopics: pd.DataFrame | None = None,
) -> str:
    """'Topic map of ICLR 2025: Graph, coloured by topic': the corpus, the drilled theme's name (and the drilled
    topic's, 'Graph › Molecule generation'), the colouring ('coloured by subtopic' where
    :func:`dashboard.figures.topic_map.colours_subtopics` says the drilled topic's papers are coloured by their
    subtopics)."""
    colouring = (
        "subtopic" if topic_map.colours_subtopics(state, subtopics) else topic_map.COLOUR_MODES[state.colour_by].lower()
    )
    place = " › ".join(name for name in (theme_name, topic_name) if name)
    return f"Topic map of {corpus}" + (f": {place}" if place else "") + f", coloured by {colouring}"


def view_of_map(
    documents: pd.DataFrame,
    matching: pd.DataFrame,
    topics: pd.DataFrame,
    state: topic_map.MapState,
    *,
    title: str,
    caption: str,
    highlights: topic_map.Highlights | None = None,
    areas: Iterable[str] | None = None,
    subtopics: pd.DataFrame | None = None,
) -> MapView:
    """The MapView of the page's map, from the view's :class:`dashboard.figures.map_model.MapModel` (the one the
    page's map draws): ``matching`` (the papers that pass the filters and the drilled theme or topic; doc_id, x, y,
    topic, theme, subtopic and the colour mode's column) in the model's colours and first level's labels, every
    other paper of ``documents`` (the cache's listing: doc_id, x, y and the same columns) grey beneath as the map
    draws them, highlights ringed, and a legend only when the labels do not name the colours
    (:func:`dashboard.figures.topic_map.labels_name_colours`). ``subtopics``: the cache's subtopics
    (TopicCache.subtopics; None: none), which label a drilled topic as on the map and colour its papers by subtopic
    (:func:`dashboard.figures.topic_map.colours_subtopics`; no legend: the labels name the colours)."""
    shown = frozenset(matching["doc_id"].astype(str))
    area_list = list(areas) if areas is not None else None
    model = map_model.map_model(
        documents, shown, topics, state, area_list, subtopics=subtopics, legend_subtitles={}, all_levels=False
    )
    points = view_points(documents, model, highlights)
    if topic_map.colours_subtopics(state, subtopics) or topic_map.labels_name_colours(state):
        legend: list[tuple[str, str]] = []
    else:
        legend = model.present_groups()
    if state.topic is None or not model.matches.any():
        return MapView(points, legend, title, caption)
    frame = drilled_frame(model, points)
    drilled = points.iloc[len(points) - int(model.matches.sum()) :]  # the matching rows come last
    inside = drilled["x"].between(frame[0], frame[1]) & drilled["y"].between(frame[2], frame[3])
    outside = int((~inside).sum())
    note = outside_note(outside, len(drilled)) if outside else ""
    return MapView(points, legend, title, caption + note, frame)


def view_points(
    listing: pd.DataFrame, model: map_model.MapModel, highlights: topic_map.Highlights | None = None
) -> pd.DataFrame:
    """A MapView's points of ``model`` (made from ``listing``): columns x, y (map coordinates), colour (hex),
    label (the point's label group at the model's first level; "" for outliers and context), highlight (search hit,
    chosen or similar paper). The context comes first, grey and unlabelled, then the matching points, each in the
    listing's order."""
    marks = highlights or topic_map.Highlights()
    chosen = set(marks.search) | set(marks.similar) | ({marks.chosen} if marks.chosen else set())
    order = np.concatenate([np.flatnonzero(~model.matches), np.flatnonzero(model.matches)])
    return pd.DataFrame(
        {
            "x": listing["x"].to_numpy(dtype=float)[order],
            "y": listing["y"].to_numpy(dtype=float)[order],
            "colour": model.point_colours()[order],
            "label": model.point_labels[order].astype(str),
            "highlight": pd.Series(model.doc_ids[order]).isin(chosen).to_numpy(),
        }
    )


def drilled_frame(model: map_model.MapModel, points: pd.DataFrame) -> tuple[float, float, float, float]:
    """(x_low, x_high, y_low, y_high), in map coordinates, of a drilled topic's figure: the frame the page's map fits
    to the matches (the model's frame: :func:`dashboard.figures.map_model.frame_of`, tight: the matches' 2nd to 98th
    percentiles padded, in the component's space), widened to hold every label group's anchor of ``points`` (a
    MapView's points) with FRAME_ANCHOR_PAD of room, so that no label points out of the figure."""
    frame = list(model.map_frame())
    anchors = label_anchors(points)
    if len(anchors):
        pad = FRAME_ANCHOR_PAD * max(frame[1] - frame[0], frame[3] - frame[2])
        frame = [
            min(frame[0], float(anchors["x"].min()) - pad),
            max(frame[1], float(anchors["x"].max()) + pad),
            min(frame[2], float(anchors["y"].min()) - pad),
            max(frame[3], float(anchors["y"].max()) + pad),
        ]
    return frame[0], frame[1], frame[2], frame[3]


def outside_note(outside: int, total: int) -> str:
    """The caption's note on the drilled topic's papers that lie outside the figure's frame."""
    papers = "1 of its papers lies" if outside == 1 else f"{outside:,} of its {total:,} papers lie"
    return f" · framed on the drilled topic as the page is; {papers} outside the frame"


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
