"""Topic centroids in the embedding space: the one rule for "a topic's direction".

A topic's centroid is the mean of its documents' embeddings, scaled to unit length, so its dot product with a unit
document embedding is their cosine similarity. Used where a document is compared with whole topics: outliers
moved to their most similar topic (pipeline.topics.model.reassign_outliers) and new papers checked against the
atlas's topics (pipeline.operations.add.fit_check).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def topic_centroids(embeddings: np.ndarray, topics: np.ndarray, ids: Sequence[int]) -> np.ndarray:
    """Unit-length mean embedding of each topic of ``ids``, in that order.

    Parameters
    ----------
    embeddings : n x dim, rows L2-normalised (float32 in the pipeline).
    topics : int, n; the topic of each row.
    ids : the topics wanted; each must have at least one row (an absent one would give a NaN row).

    Returns
    -------
    centroids : len(ids) x dim, float of ``embeddings``' dtype; each row the mean of its topic's rows divided by its
        L2 norm (a zero mean, as of two opposite rows, stays zero: the norm is floored at 1e-12).
    """
    centroids = np.vstack([embeddings[topics == topic].mean(axis=0) for topic in ids])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    return centroids
