"""pipeline.geometry.umap_layout: a map refined from a starting layout is the same whether UMAP gets the rows or the
one-column placeholder of rows_for_umap (which spares umap-learn's copies of the rows)."""

from __future__ import annotations

import numpy as np

from pipeline.geometry.neighbors import cosine_knn
from pipeline.geometry.umap_layout import rows_for_umap, umap_layout
from pipeline.represent.unit_rows import normalise_rows


def clustered_rows(n_groups: int = 4, per_group: int = 300, dim: int = 32) -> np.ndarray:
    """Unit rows (float32, n_groups * per_group x dim) in ``n_groups`` seeded clusters."""
    rng = np.random.default_rng(0)
    centres = np.repeat(rng.normal(size=(n_groups, dim)), per_group, axis=0)
    return normalise_rows((centres + 0.5 * rng.normal(size=centres.shape)).astype(np.float32))


def test_the_rows_are_handed_over_without_a_start_and_a_placeholder_with_one():
    rows = clustered_rows(per_group=5)
    assert rows_for_umap(rows, None) is rows
    placeholder = rows_for_umap(rows, np.zeros((len(rows), 2), np.float32))
    assert placeholder.shape == (len(rows), 1) and placeholder.dtype == np.float32 and not placeholder.any()


def test_a_map_refined_from_a_start_is_the_same_with_the_placeholder_as_with_the_rows(monkeypatch):
    import pipeline.geometry.umap_layout as umap_layout_module

    rows = clustered_rows()
    indices, similarities = cosine_knn(rows, 16)
    start = np.random.default_rng(1).normal(size=(len(rows), 2)).astype(np.float32)
    refined = umap_layout(rows, indices, similarities, 2, 15, 0.1, 0, 5, 20, start)
    monkeypatch.setattr(umap_layout_module, "rows_for_umap", lambda embeddings, init: embeddings)
    with_rows = umap_layout(rows, indices, similarities, 2, 15, 0.1, 0, 5, 20, start)
    assert refined.shape == (len(rows), 2)
    np.testing.assert_array_equal(refined, with_rows)
