"""The build's clustering stages (pipeline.operations.build): the clustering space (UMAP, through the layout store)
then HDBSCAN, or one cluster below MIN_DOCUMENTS_FOR_UMAP documents; for a large corpus both on its landmarks, the
other documents voted into clusters by theirs (pipeline.geometry.landmarks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pipeline.config import BuildConfig
from pipeline.geometry.landmarks import Landmarks, fitted_rows, vote_rest
from pipeline.geometry.neighbors import Neighbours
from pipeline.store.layouts import StageStore

if TYPE_CHECKING:
    from pipeline.runtime.stages import StageTimer

# Below this many documents UMAP cannot build a neighbour graph worth the name: one topic, PCA map.
MIN_DOCUMENTS_FOR_UMAP = 5


def cluster(
    n: int,
    embeddings: np.ndarray,
    embeddings_key: str,
    neighbour_lists: Callable[[], Neighbours],
    config: BuildConfig,
    layouts: StageStore,
    timer: StageTimer,
    landmarks: Landmarks | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The clustering space (UMAP) and HDBSCAN: (labels int64 n, -1 = outlier; membership float32 n). Below
    MIN_DOCUMENTS_FOR_UMAP documents every document is in cluster 0. ``neighbour_lists()``: every document's
    neighbour lists, which UMAP reads; with ``landmarks`` both run on the landmarks (their own neighbour lists, so
    ``neighbour_lists`` is not called) and the other documents take their landmarks' vote
    (pipeline.geometry.landmarks.vote_rest)."""
    if n < MIN_DOCUMENTS_FOR_UMAP:
        return np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.float32)
    if config.min_cluster_size is None:
        raise ValueError("cluster() needs a resolved BuildConfig (BuildConfig.resolved gives min_cluster_size)")
    from pipeline.geometry.cluster import hdbscan_clusters
    from pipeline.geometry.umap_layout import cached_umap_layout

    fitted, neighbours = fitted_rows(embeddings, neighbour_lists, landmarks)
    with timer.stage("umap_cluster_space"):
        reduced = cached_umap_layout(
            layouts,
            "umap_cluster_space",
            embeddings_key,
            fitted,
            neighbours,
            config.umap_n_components,
            config.umap_n_neighbors,
            config.umap_min_dist,
            config.random_state,
            n_epochs=config.umap_n_epochs,
        )
    with timer.stage("hdbscan"):
        labels, strengths = hdbscan_clusters(
            reduced,
            config.min_cluster_size,
            config.min_samples,
            config.cluster_selection_method,
            config.max_cluster_share,
        )
    if landmarks is None:
        return labels, strengths
    with timer.stage("place_clusters"):
        return vote_rest(landmarks, labels, strengths)
