"""pipeline.geometry.centroids: a topic's direction is the unit mean of its papers' embeddings."""

from __future__ import annotations

import numpy as np

from pipeline.geometry.centroids import topic_centroids, topic_fit


def test_centroids_are_unit_means_in_the_order_asked():
    embeddings = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [-1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    topics = np.array([0, 0, 5, 7, 7])
    centroids = topic_centroids(embeddings, topics, [5, 0, 7])
    assert centroids.dtype == np.float32 and centroids.shape == (3, 2)
    assert np.allclose(centroids[0], [1.0, 0.0])
    assert np.allclose(centroids[1], [np.sqrt(0.5), np.sqrt(0.5)])
    assert np.array_equal(centroids[2], [0.0, 0.0])  # opposite papers: a zero mean stays zero, never NaN


def test_topic_fit_in_blocks_of_rows_equals_one_block():
    """pipeline.geometry.centroids.topic_fit: the topics' papers compared with their centroids in blocks of 1, 7 and
    all rows give the same similarities and the same threshold, to the bit; the threshold is a quantile of each
    topic paper's similarity to its own centroid."""
    generator = np.random.default_rng(0)
    embeddings = generator.normal(size=(500, 16)).astype(np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    topics = generator.integers(-1, 6, size=500)
    new = embeddings[:40] + np.float32(0.1)
    whole = topic_fit(embeddings, topics, new, 0.05, block_rows=500)
    for block_rows in (1, 7):
        similarity, threshold = topic_fit(embeddings, topics, new, 0.05, block_rows=block_rows)
        assert np.array_equal(similarity, whole[0]) and threshold == whole[1]
    ids = sorted(set(topics.tolist()) - {-1})
    centroids = topic_centroids(embeddings, topics, ids)
    own = [embeddings[row] @ centroids[ids.index(topic)] for row, topic in enumerate(topics) if topic != -1]
    assert np.isclose(whole[1], np.quantile(own, 0.05), atol=1e-6)
