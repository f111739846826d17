"""pipeline.geometry.centroids: a topic's direction is the unit mean of its papers' embeddings."""

from __future__ import annotations

import numpy as np

from pipeline.geometry.centroids import topic_centroids


def test_centroids_are_unit_means_in_the_order_asked():
    embeddings = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [-1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    topics = np.array([0, 0, 5, 7, 7])
    centroids = topic_centroids(embeddings, topics, [5, 0, 7])
    assert centroids.dtype == np.float32 and centroids.shape == (3, 2)
    assert np.allclose(centroids[0], [1.0, 0.0])
    assert np.allclose(centroids[1], [np.sqrt(0.5), np.sqrt(0.5)])
    assert np.array_equal(centroids[2], [0.0, 0.0])  # opposite papers: a zero mean stays zero, never NaN
