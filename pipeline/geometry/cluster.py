"""Density clustering with HDBSCAN on the UMAP clustering space (as BERTopic does by default)."""

from __future__ import annotations

import numpy as np


def hdbscan_clusters(
    points: np.ndarray,
    min_cluster_size: int,
    min_samples: int | None,
    method: str = "eom",
    max_cluster_share: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Cluster points with HDBSCAN (euclidean).

    Parameters
    ----------
    points : float32, n x d (the UMAP clustering space).
    min_cluster_size, min_samples : HDBSCAN's parameters (min_samples None = min_cluster_size, HDBSCAN's default).
    method : cluster_selection_method, "eom" or "leaf".
    max_cluster_share : no "eom" cluster may hold more than this share of the points (0 = no cap; HDBSCAN's
        ``max_cluster_size``, which replaces a larger cluster by its children in the cluster tree). The cap is
        applied only where it leaves room for two clusters of ``min_cluster_size`` (not in tiny corpora).

    Returns (labels int64 n, -1 = outlier; probabilities float32 n in [0, 1], HDBSCAN's membership strength).
    """
    import hdbscan

    cap = int(max_cluster_share * len(points))
    model = hdbscan.HDBSCAN(
        min_cluster_size=max(2, min_cluster_size),
        min_samples=min_samples,
        metric="euclidean",
        cluster_selection_method=method,
        max_cluster_size=cap if cap >= 2 * min_cluster_size else 0,
        core_dist_n_jobs=1,
    )
    model.fit(points)
    return model.labels_.astype(np.int64), model.probabilities_.astype(np.float32)
