"""Where the publication figure's labels go: beside the points in two columns, each joined to its cluster by a leader
line, never over a point, another label or the legend. Pure (numpy, pandas and matplotlib's font metrics).

matplotlib (:mod:`dashboard.figures.publication`) draws this layout, computed in points (1/72 inch) for the
figure's plot area: each label group's name, set in 8-12 pt by its size (7-10 pt with more than 24 labels), on two
balanced lines while the two columns have room for that (:func:`dashboard.figures.label_layout.wrap_name`), else on
one; when even one line each does not fit the plot's height, the smallest groups go unlabelled and the caption says
so. The columns come from :func:`dashboard.figures.label_layout.place_labels` (an exact isotonic fit, microseconds),
the anchors from :func:`dashboard.figures.label_layout.dense_anchor` (on the points, never between the lobes of a
cluster). DataMapPlot's own placement, used before, took 25-50 s for the 55 topic labels of the whole conference
(its ``adjust_text_locations`` loop) and pointed leader lines at empty space between a theme's scattered papers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dashboard.figures.label_layout import EDGE_PX, GAP_PX, choose_sides, dense_anchor, place_labels, wrap_name

MANY_LABELS = 24  # above this many labels, smaller fonts
FONT_PT = {False: (8.0, 12.0), True: (7.0, 10.0)}  # (smallest, largest) by many labels
LINE_SPACING = 1.2  # matplotlib's default line height, in font sizes
SPACING_PT = 3.0  # between two labels of a column
WRAP_CHARS = 22
MIN_MAP_SHARE = 0.45  # the points keep at least this share of the plot's width; else labels go on two lines

# (lines, font size in points) -> (width, height) in points
Measure = Callable[[list[str], float], tuple[float, float]]


@dataclass(frozen=True)
class LabelLayout:
    """Labels placed for a plot area of ``width_pt`` x ``height_pt``.

    ``labels``: one row per drawn label, largest group first: label (the group's name), lines (list of str), font_pt,
    anchor_x, anchor_y (data: where its leader line ends, on the points), text_x, text_y (data: the label's inner
    edge and middle), side (-1 left column, text right-aligned; +1 right column), size (papers), colour (the group's
    dominant colour). ``x_range``, ``y_range``: the axes' data limits (one scale for both axes). ``n_groups``: label
    groups in the view (``len(labels)`` of them drawn: the rest did not fit).
    """

    labels: pd.DataFrame
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    n_groups: int

    @property
    def n_unlabelled(self) -> int:
        """Label groups left without a label because the columns were full."""
        return self.n_groups - len(self.labels)


def label_anchors(points: pd.DataFrame) -> pd.DataFrame:
    """Where each label group points: per non-empty ``label`` of ``points`` (x, y, colour, label), its densest spot
    (:func:`dense_anchor`), its size and its dominant colour. Columns label, x, y, size, colour; largest group
    first (ties by label)."""
    labelled = points[points["label"].astype(str) != ""]
    rows = []
    for label, group in labelled.groupby("label", sort=True):
        x, y = dense_anchor(group["x"].to_numpy(dtype=float), group["y"].to_numpy(dtype=float))
        rows.append((str(label), x, y, len(group), str(group["colour"].value_counts().index[0])))
    anchors = pd.DataFrame(rows, columns=["label", "x", "y", "size", "colour"])
    return anchors.sort_values(["size", "label"], ascending=[False, True], ignore_index=True)


def font_sizes(sizes: np.ndarray) -> np.ndarray:
    """Font size in points per label group of ``sizes`` papers: the square root of its share of the largest, from the
    smallest to the largest size of FONT_PT (DataMapPlot sizes labels by cluster the same way)."""
    sizes = np.asarray(sizes, dtype=float)
    if not sizes.size:
        return sizes
    low, high = FONT_PT[len(sizes) > MANY_LABELS]
    return np.round(low + (high - low) * np.sqrt(sizes / sizes.max()), 1)


def _fits(anchors: pd.DataFrame, sizes: np.ndarray, extent, width_pt: float, height_pt: float) -> bool:
    """Whether labels of ``sizes`` ((n, 2) points) fit the plot the way place_labels will set them: each column's
    labels stack within its height, and the columns leave the points MIN_MAP_SHARE of its width."""
    if not len(anchors):
        return True
    side = choose_sides(anchors["x"].to_numpy(dtype=float), (extent[0] + extent[1]) / 2)
    room = height_pt - 2 * EDGE_PX
    for column in (-1, 1):
        members = side == column
        if sizes[members, 1].sum() + SPACING_PT * max(int(members.sum()) - 1, 0) > room:
            return False
    widths = [float(sizes[side == column, 0].max()) if (side == column).any() else 0.0 for column in (-1, 1)]
    room_x = width_pt - sum(widths) - 2 * (GAP_PX + EDGE_PX)
    x_span, y_span = max(extent[1] - extent[0], 1e-9), max(extent[3] - extent[2], 1e-9)
    scale = min(room_x / x_span, (height_pt - 2 * EDGE_PX) / y_span)
    return x_span * scale >= MIN_MAP_SHARE * width_pt


def _sizes(anchors: pd.DataFrame, lines: list[list[str]], measure: Measure) -> np.ndarray:
    fonts = font_sizes(anchors["size"].to_numpy())
    return np.asarray([measure(text, float(font)) for text, font in zip(lines, fonts)], dtype=float).reshape(-1, 2)


def layout_labels(
    points: pd.DataFrame, width_pt: float, height_pt: float, measure: Measure, wrap_chars: int = WRAP_CHARS
) -> LabelLayout:
    """The labels of ``points`` (a MapView's points: x, y, colour, label) for a plot area of ``width_pt`` x
    ``height_pt`` points, measured with ``measure``. Each group's name on two balanced lines (narrower labels leave the
    points more width) while the columns are tall enough and the points keep MIN_MAP_SHARE of the width, else on one;
    groups are dropped smallest first while neither fits."""
    anchors = label_anchors(points)
    extent = _extent(points)
    for count in range(len(anchors), -1, -1):
        kept = anchors.iloc[:count]
        for lines in (
            [wrap_name(name, wrap_chars) for name in kept["label"]],
            [[" ".join(name.split())] for name in kept["label"]],
        ):
            sizes = _sizes(kept, lines, measure)
            if not _fits(kept, sizes, extent, width_pt, height_pt):
                continue
            placement = place_labels(
                kept[["x", "y"]].to_numpy(dtype=float), sizes, extent, height_pt, width_pt, spacing_px=SPACING_PT
            )
            fonts = font_sizes(kept["size"].to_numpy())
            return LabelLayout(_rows(kept, lines, fonts, placement), placement.x_range, placement.y_range, len(anchors))
    raise AssertionError("no labels always fit")  # count 0 fits any plot


def _extent(points: pd.DataFrame) -> tuple[float, float, float, float]:
    """(x_low, x_high, y_low, y_high) of ``points``, widened to a square around them when they have no width or no
    height (one point, points on a line)."""
    if points.empty:
        return 0.0, 1.0, 0.0, 1.0
    x, y = points["x"].to_numpy(dtype=float), points["y"].to_numpy(dtype=float)
    extent = float(x.min()), float(x.max()), float(y.min()), float(y.max())
    if extent[1] - extent[0] < 1e-9 or extent[3] - extent[2] < 1e-9:
        pad = max(extent[1] - extent[0], extent[3] - extent[2], 1.0) / 2
        centre_x, centre_y = (extent[0] + extent[1]) / 2, (extent[2] + extent[3]) / 2
        extent = (centre_x - pad, centre_x + pad, centre_y - pad, centre_y + pad)
    return extent


def _rows(anchors: pd.DataFrame, lines: list[list[str]], fonts: np.ndarray, placement) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "label": anchors["label"].tolist(),
            "lines": lines,
            "font_pt": fonts.astype(float),
            "anchor_x": anchors["x"].to_numpy(dtype=float),
            "anchor_y": anchors["y"].to_numpy(dtype=float),
            "text_x": placement.text_xy[:, 0] if len(anchors) else np.zeros(0),
            "text_y": placement.text_xy[:, 1] if len(anchors) else np.zeros(0),
            "side": placement.side.astype(int) if len(anchors) else np.zeros(0, int),
            "size": anchors["size"].to_numpy(dtype=int),
            "colour": anchors["colour"].tolist(),
        }
    )


def font_measure(families: list[str]) -> Measure:
    """A :data:`Measure` with matplotlib's metrics of ``families`` (glyph fallback along the list, as matplotlib
    draws): width of the widest line, height of the lines at LINE_SPACING. Each line is measured once."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    widths: dict[tuple[str, float], float] = {}

    def measure(lines: list[str], font_pt: float) -> tuple[float, float]:
        for line in lines:
            if (line, font_pt) not in widths:
                properties = FontProperties(family=families, size=font_pt)
                widths[(line, font_pt)] = text_to_path.get_text_width_height_descent(line, properties, ismath=False)[0]
        width = max((widths[(line, font_pt)] for line in lines), default=0.0)
        return width, max(len(lines), 1) * font_pt * LINE_SPACING

    return measure
