"""Where the map's labels go: beside the points, never on them, joined to their cluster by a leader line.

DataMapPlot (TutteInstitute/datamapplot, what BERTopic's ``visualize_document_datamap`` draws) sets its labels on
a ring around the data and joins each to its cluster with a line, so no label covers a point or another label.
A plotly map in a wide page has its free room to the left and right of the points, so here the ring becomes two
columns: each label goes to the side nearer its cluster, and within a column the labels keep the vertical order
of their clusters at the smallest total displacement that keeps them ``spacing`` pixels apart. That is an
isotonic regression (pool-adjacent-violators, Barlow et al. 1972 "Statistical inference under order
restrictions"; scipy's) of the clusters' heights minus the cumulative label heights, so it is exact and takes
microseconds; then two labels whose leader lines cross swap places and the column is stacked again, while that
removes crossings (DataMapPlot's ``fix_crossings`` swaps the same way).

Geometry is in pixels of a nominal plot size (the server does not know the browser's width): the map fixes the
axes' aspect ratio, so on a wider screen plotly only adds room at the sides and on a narrower one scales
everything down; the columns stay off the points either way. numpy and scipy; no plotting here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Average advance of a character in a sans-serif face, as a share of the font size (Arial/Inter set lower-case
# text at 0.50-0.55 em; 0.58 leaves room for capitals and bold).
CHAR_WIDTH_EM = 0.58
LINE_HEIGHT_EM = 1.3
LABEL_PADDING_PX = 6  # the box's padding and border, both sides together
NOMINAL_WIDTH_PX = 1100  # the main area of a 1440-pixel-wide window with the sidebar open
GAP_PX = 28  # between the points and the nearest label column
EDGE_PX = 10  # between a label column and the plot's edge


@dataclass(frozen=True)
class LabelPlacement:
    """Placed labels and the axis ranges that make room for them.

    ``text_xy``: (n, 2) data coordinates of each label's anchor point on its column (the label's right edge for
    the left column, its left edge for the right one), in input order. ``side``: (n,) -1 left, +1 right.
    ``x_range``, ``y_range``: (low, high) of the axes at the nominal size. ``pixels_per_unit``: the scale used.
    """

    text_xy: np.ndarray
    side: np.ndarray
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    pixels_per_unit: float


def wrap_name(name: str, width: int) -> list[str]:
    """``name`` as the map sets it: one line when it has at most ``width`` characters (or no space), else two
    lines split at the word boundary that makes the longer line shortest (the first line the longer on a tie).
    Never cut: the lines joined by a space give back ``name`` (its runs of white space folded), so a name of any
    length keeps every word; a split never falls inside a parenthesised abbreviation's first word or before a
    closing bracket."""
    text = " ".join(str(name).split())
    spaces = [index for index, char in enumerate(text) if char == " " and text[index + 1 : index + 2] != ")"]
    if len(text) <= width or not spaces:
        return [text]
    best = min(spaces, key=lambda index: (max(index, len(text) - index - 1), -index))
    return [text[:best], text[best + 1 :]]


def text_size_px(lines: list[str], font_px: float) -> tuple[float, float]:
    """Estimated (width, height) in pixels of a label of ``lines`` set at ``font_px``, box padding included."""
    longest = max((len(line) for line in lines), default=0)
    return longest * font_px * CHAR_WIDTH_EM + LABEL_PADDING_PX, max(
        len(lines), 1
    ) * font_px * LINE_HEIGHT_EM + LABEL_PADDING_PX


def isotonic_increasing(values: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to ``values`` (n floats) in least squares: n floats, scipy's
    pool-adjacent-violators (``scipy.optimize.isotonic_regression``, SciPy 1.12 and later)."""
    from scipy.optimize import isotonic_regression

    return np.asarray(isotonic_regression(np.asarray(values, dtype=float), increasing=True).x, dtype=float)


def stack_column(
    anchor_y: np.ndarray,
    heights: np.ndarray,
    spacing: float,
    low: float,
    high: float,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Centre heights for labels of ``heights`` in one column, bottom to top in ``order`` (positions into the inputs;
    default: the order of ``anchor_y``), each as near its anchor as allowed while consecutive labels stay ``spacing``
    apart; the stack is moved inside [low, high] when it fits. All values in one unit (pixels or data). Returns
    centres in input order."""
    order = np.argsort(anchor_y, kind="stable") if order is None else np.asarray(order, dtype=int)
    ordered_heights = heights[order]
    steps = np.concatenate([[0.0], (ordered_heights[1:] + ordered_heights[:-1]) / 2 + spacing])
    offsets = np.cumsum(steps)
    # In z = centre - offset the spacing rule is "z non-decreasing" and the plot's edges are the constant bounds
    # z >= low + h_first/2 and z <= high - h_last/2 - offset_last; clipping the unbounded isotonic fit to constant
    # bounds gives the bounded least-squares fit.
    fitted = isotonic_increasing(anchor_y[order] - offsets)
    if len(fitted):
        lowest, highest = low + ordered_heights[0] / 2, high - ordered_heights[-1] / 2 - offsets[-1]
        fitted = (
            np.clip(fitted, lowest, highest)
            if lowest <= highest
            else fitted + ((lowest + highest) / 2 - (fitted[0] + fitted[-1]) / 2)
        )
    centres = fitted + offsets
    placed = np.empty_like(centres)
    placed[order] = centres
    return placed


def crossing_pairs(text_xy: np.ndarray, anchors: np.ndarray) -> list[tuple[int, int]]:
    """(i, j), i < j, of the leader lines (label ``text_xy[i]`` to ``anchors[i]``) that cross, found for all pairs
    at once (the signs of the turns each segment's ends make with the other segment)."""
    a, b = np.asarray(text_xy, dtype=float).reshape(-1, 2), np.asarray(anchors, dtype=float).reshape(-1, 2)

    def turn(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> np.ndarray:  # p, q: (n, 1, 2) segments; r: (1, n, 2)
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])

    p, q = a[:, None, :], b[:, None, :]
    c, d = a[None, :, :], b[None, :, :]
    crossed = (turn(p, q, c) * turn(p, q, d) < 0) & (turn(c, d, p) * turn(c, d, q) < 0)
    i, j = np.nonzero(np.triu(crossed, k=1))
    return list(zip(i.tolist(), j.tolist()))


MAX_SWAP_TRIALS = 400


def uncrossed_column(
    anchors: np.ndarray, heights: np.ndarray, x: float, spacing: float, low: float, high: float
) -> np.ndarray:
    """Centre heights of one column's labels (their inner edges at ``x``) so that few leader lines cross: stacked in
    the order of their anchors' heights, then two labels whose lines cross swap places in that order and the column
    is stacked again (as DataMapPlot's ``fix_crossings`` swaps, but re-stacked, so labels of different heights never
    overlap), kept when that lowers the number of crossings; at most MAX_SWAP_TRIALS stackings. Returns centres in
    input order."""
    order = list(np.argsort(anchors[:, 1], kind="stable"))
    best = stack_column(anchors[:, 1], heights, spacing, low, high, np.asarray(order))

    def crossings(centres: np.ndarray) -> list[tuple[int, int]]:
        return crossing_pairs(np.column_stack([np.full(len(centres), x), centres]), anchors)

    crossed, trials = crossings(best), 0
    while crossed and trials < MAX_SWAP_TRIALS:
        for i, j in crossed:
            trials += 1
            trial = order.copy()
            a, b = trial.index(i), trial.index(j)
            trial[a], trial[b] = trial[b], trial[a]
            centres = stack_column(anchors[:, 1], heights, spacing, low, high, np.asarray(trial))
            now = crossings(centres)
            if len(now) < len(crossed):
                order, best, crossed = trial, centres, now
                break
            if trials >= MAX_SWAP_TRIALS:
                break
        else:
            break  # no single swap helps
    return best


def choose_sides(anchor_x: np.ndarray, centre_x: float) -> np.ndarray:
    """-1 (left) or +1 (right) per label: the half of the labels whose clusters lie further left go left (the
    middle one of an odd count goes to the side of ``centre_x`` it lies on), so the columns hold equal shares."""
    order = np.argsort(anchor_x, kind="stable")
    half = len(order) // 2
    side = np.ones(len(order), dtype=int)
    side[order[:half]] = -1
    if len(order) % 2 and float(anchor_x[order[half]]) < centre_x:
        side[order[half]] = -1
    return side


def place_labels(
    anchors: np.ndarray,
    sizes_px: np.ndarray,
    extent: tuple[float, float, float, float],
    height_px: float,
    width_px: float = NOMINAL_WIDTH_PX,
    spacing_px: float = 4.0,
) -> LabelPlacement:
    """Place one label per anchor in two columns beside the points.

    ``anchors``: (n, 2) data coordinates each label points to. ``sizes_px``: (n, 2) label (width, height) in
    pixels (see :func:`text_size_px`). ``extent``: (x_low, x_high, y_low, y_high) of every point that labels
    must not cover. ``height_px``, ``width_px``: the plot area at the nominal size. Labels never overlap one
    another when a column's labels fit in ``height_px``; taller columns keep their order and spill past the edge.
    """
    anchors = np.asarray(anchors, dtype=float).reshape(-1, 2)
    sizes = np.asarray(sizes_px, dtype=float).reshape(-1, 2)
    x_low, x_high, y_low, y_high = (float(value) for value in extent)
    x_span, y_span = max(x_high - x_low, 1e-9), max(y_high - y_low, 1e-9)
    side = choose_sides(anchors[:, 0], (x_low + x_high) / 2)
    left_width = float(sizes[side < 0, 0].max()) if (side < 0).any() else 0.0
    right_width = float(sizes[side > 0, 0].max()) if (side > 0).any() else 0.0
    room_x = width_px - left_width - right_width - 2 * (GAP_PX + EDGE_PX)
    scale = max(min(room_x / x_span, (height_px - 2 * EDGE_PX) / y_span), 1e-9)
    y_centre = (y_low + y_high) / 2
    y_range = (y_centre - height_px / 2 / scale, y_centre + height_px / 2 / scale)
    text_xy = np.empty_like(anchors)
    text_xy[:, 0] = np.where(side < 0, x_low - GAP_PX / scale, x_high + GAP_PX / scale)
    for column in (-1, 1):
        members = np.flatnonzero(side == column)
        if members.size:
            text_xy[members, 1] = uncrossed_column(
                anchors[members],
                sizes[members, 1] / scale,
                float(text_xy[members[0], 0]),
                spacing_px / scale,
                y_range[0] + EDGE_PX / scale,
                y_range[1] - EDGE_PX / scale,
            )
    left_edge = x_low - (GAP_PX + left_width + EDGE_PX) / scale
    right_edge = x_high + (GAP_PX + right_width + EDGE_PX) / scale
    spare = max(width_px / scale - (right_edge - left_edge), 0.0)
    x_range = (left_edge - spare / 2, right_edge + spare / 2)
    return LabelPlacement(text_xy, side, x_range, y_range, scale)


def dense_anchor(x: np.ndarray, y: np.ndarray, bins: int = 16) -> tuple[float, float]:
    """Where to point at a cluster of points: the median of the points in its densest cell of a ``bins`` x
    ``bins`` grid over its extent (a centroid can fall between the lobes of a cluster; this is on the points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan")
    if x.size < 4:
        return float(np.median(x)), float(np.median(y))
    x_span, y_span = max(float(np.ptp(x)), 1e-12), max(float(np.ptp(y)), 1e-12)
    cells = np.minimum((bins * (x - x.min()) / x_span).astype(int), bins - 1) * bins + np.minimum(
        (bins * (y - y.min()) / y_span).astype(int), bins - 1
    )
    densest = np.bincount(cells).argmax()
    inside = cells == densest
    return float(np.median(x[inside])), float(np.median(y[inside]))
