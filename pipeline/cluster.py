"""Density clustering with HDBSCAN on the UMAP clustering space (as BERTopic does by default)."""

from __future__ import annotations

import numpy as np


def hdbscan_clusters(
    points: np.ndarray, min_cluster_size: int, min_samples: int | None, method: str = "eom", max_cluster_size: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Cluster points with HDBSCAN (euclidean).

    Parameters
    ----------
    points : float32, n x d (the UMAP clustering space).
    min_cluster_size, min_samples : HDBSCAN's parameters (min_samples None = min_cluster_size, HDBSCAN's default).
    method : cluster_selection_method, "eom" or "leaf".
    max_cluster_size : HDBSCAN's cap on the size of an "eom" cluster (0 = none): a larger one is replaced by its
        children in the cluster tree.

    Returns (labels int64 n, -1 = outlier; probabilities float32 n in [0, 1], HDBSCAN's membership strength).
    """
    import hdbscan

    model = hdbscan.HDBSCAN(
        min_cluster_size=max(2, min_cluster_size),
        min_samples=min_samples,
        metric="euclidean",
        cluster_selection_method=method,
        max_cluster_size=max_cluster_size,
        core_dist_n_jobs=1,
    )
    model.fit(points)
    return model.labels_.astype(np.int64), model.probabilities_.astype(np.float32)
