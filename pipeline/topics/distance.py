"""The distance between topics for BERTopic's topic hierarchy: cosine distance that is a valid distance matrix.

BERTopic's ``hierarchical_topics`` computes ``1 - cosine_similarity(c_tf_idf)`` by default. For two topics with
identical c-TF-IDF rows the similarity comes out as 1 + 2e-16 in floating point, so the distance is -2e-16 (or
-4e-16), and BERTopic's ``validate_distance_matrix`` then refuses the matrix ("Distance matrix cannot contain
negative values"). Two such topics are at distance 0: here the distance is clipped to [0, 2], made exactly
symmetric, and given a zero diagonal. Passed to BERTopic through its public ``distance_function`` argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def cosine_distance_matrix(vectors: Any) -> np.ndarray:
    """Cosine distances between the rows of ``vectors`` (dense or scipy sparse, n x terms): float64, n x n,
    symmetric, zero diagonal, every entry in [0, 2]. Rows of zeros are at distance 1 from every other row."""
    from sklearn.metrics.pairwise import cosine_similarity

    distances = 1.0 - np.asarray(cosine_similarity(vectors), dtype=np.float64)
    distances = np.clip((distances + distances.T) / 2.0, 0.0, 2.0)
    np.fill_diagonal(distances, 0.0)
    return distances
