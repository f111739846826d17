"""Label placement beside the points (dashboard.figures.label_layout): order, spacing, sides, no overlap, no cover."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.figures.label_layout import (
    choose_sides,
    dense_anchor,
    isotonic_increasing,
    place_labels,
    stack_column,
    text_size_px,
)


def test_isotonic_regression_pools_adjacent_violators():
    assert isotonic_increasing(np.array([3.0, 1.0, 2.0, 5.0, 4.0])).tolist() == [2.0, 2.0, 2.0, 4.5, 4.5]
    assert isotonic_increasing(np.array([1.0, 2.0])).tolist() == [1.0, 2.0]


def test_a_column_keeps_its_order_and_spacing_and_stays_inside():
    anchors = np.array([5.0, 5.1, 5.2, 0.0])
    heights = np.full(4, 1.0)
    centres = stack_column(anchors, heights, spacing=0.5, low=0.0, high=10.0)
    order = np.argsort(centres)
    assert order.tolist() == [3, 0, 1, 2]  # the clusters' vertical order
    assert np.all(np.diff(centres[order]) >= 1.5 - 1e-9)  # one label height plus the spacing
    assert centres.min() - 0.5 >= 0.0 and centres.max() + 0.5 <= 10.0
    assert abs(centres[1] - 5.1) < 1e-9  # the middle of the pooled block stays at its anchor


def test_sides_split_the_labels_in_half_by_their_clusters_position():
    assert choose_sides(np.array([0.0, 9.0, 1.0, 8.0]), 4.5).tolist() == [-1, 1, -1, 1]
    assert choose_sides(np.array([0.0, 4.0, 9.0]), 5.0).tolist() == [-1, -1, 1]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=30), st.integers(min_value=0, max_value=10_000))
def test_placed_labels_never_overlap_each_other_or_cover_the_points(n_labels, seed):
    rng = np.random.default_rng(seed)
    anchors = rng.uniform(0, 10, size=(n_labels, 2))
    sizes = np.array(
        [
            text_size_px(["a label of some words"][: 1 + (index % 2)] * (1 + index % 2), 12.0)
            for index in range(n_labels)
        ]
    )
    placement = place_labels(anchors, sizes, (0.0, 10.0, 0.0, 10.0), height_px=760)
    scale = placement.pixels_per_unit
    left_x = np.where(placement.side < 0, placement.text_xy[:, 0] - sizes[:, 0] / scale, placement.text_xy[:, 0])
    boxes = np.column_stack(
        [
            left_x,
            left_x + sizes[:, 0] / scale,
            placement.text_xy[:, 1] - sizes[:, 1] / 2 / scale,
            placement.text_xy[:, 1] + sizes[:, 1] / 2 / scale,
        ]
    )
    assert np.all((boxes[:, 1] <= 0.0) | (boxes[:, 0] >= 10.0))  # every label beside the points, none on them
    for i in range(n_labels):
        for j in range(i + 1, n_labels):
            apart = (
                boxes[i, 1] <= boxes[j, 0]
                or boxes[j, 1] <= boxes[i, 0]
                or boxes[i, 3] <= boxes[j, 2]
                or boxes[j, 3] <= boxes[i, 2]
            )
            assert apart, (i, j)
    assert placement.x_range[0] <= boxes[:, 0].min() and boxes[:, 1].max() <= placement.x_range[1]


def test_the_anchor_lies_in_the_densest_part_of_a_cluster():
    rng = np.random.default_rng(0)
    dense = rng.normal((2.0, 2.0), 0.05, size=(200, 2))
    sparse = rng.uniform(5, 9, size=(40, 2))
    points = np.vstack([dense, sparse])
    x, y = dense_anchor(points[:, 0], points[:, 1])
    assert abs(x - 2.0) < 0.3 and abs(y - 2.0) < 0.3  # the mean (about 2.6, 2.6) lies off the cluster
