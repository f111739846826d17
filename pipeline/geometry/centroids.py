"""Topic centroids in the embedding space: the one rule for "a topic's direction".

A topic's centroid is the mean of its documents' embeddings, scaled to unit length, so its dot product with a unit
document embedding is their cosine similarity. Used where a document is compared with whole topics: outliers
moved to their most similar topic (pipeline.topics.model.reassign_outliers) and new papers checked against the
atlas's topics (pipeline.operations.add.fit_check); whether a paper fits any topic (:func:`topic_fit` for new papers,
``place``; :func:`member_fit` for the atlas's own, the build's fit check in pipeline.topics.misfits).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Rows per block when the topics' papers are compared with their own topic's centroid (topic_fit).
OWN_BLOCK_ROWS = 65_536


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


def leave_one_out_similarities(embeddings: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Cosine similarity of each member to the mean of the other members (float64, len(members)); 1.0 for a
    topic of one paper. ``embeddings``: float32 n x dim, L2-normalised rows; ``members``: int row indices."""
    if len(members) < 2:
        return np.ones(len(members))
    vectors = embeddings[members].astype(np.float64)
    others = vectors.sum(axis=0) - vectors
    norms = np.maximum(np.linalg.norm(others, axis=1), 1e-12)
    return np.einsum("ij,ij->i", vectors, others) / norms


def fit_threshold(own_similarities: np.ndarray, quantile: float) -> float:
    """The centroid similarity a paper needs to fit a topic: the ``quantile`` quantile (0-1, numpy's linear
    interpolation) of the topics' own papers' similarities to their own topic's centroid (``own_similarities``,
    float, one per paper in a topic; not empty). Used by ``place`` (pipeline.operations.place, 0.01)."""
    return float(np.quantile(own_similarities, quantile))


def topic_fit(
    embeddings: np.ndarray,
    topics: np.ndarray,
    new_embeddings: np.ndarray,
    quantile: float,
    block_rows: int = OWN_BLOCK_ROWS,
) -> tuple[np.ndarray, float | None]:
    """How near new papers come to the atlas's topics: (per new document the cosine similarity to its nearest topic
    centroid, float, m; the threshold of :func:`fit_threshold` over the atlas's topic papers' similarity to their own
    topic's centroid, or None without topics). A new document below the threshold is further from every topic than
    all but ``quantile`` of the topics' own papers are from theirs: it fits no topic. ``embeddings`` n x dim (topics
    ``topics``, int n, -1 = outlier) and ``new_embeddings`` m x dim have unit rows; the topics' papers are compared
    with their centroids ``block_rows`` at a time."""
    topics = np.asarray(topics)
    ids = sorted(set(topics.tolist()) - {-1})
    if not ids or not len(new_embeddings):
        return np.full(len(new_embeddings), -1.0), None
    centroids = topic_centroids(embeddings, topics, ids)
    clustered = np.flatnonzero(topics != -1)
    # Row by row in blocks: the clustered rows and their centroids gathered at once were two n x dim copies (1.1 GB
    # at 285,717 papers); each row's dot product is the same either way.
    own = np.empty(len(clustered), dtype=np.result_type(embeddings, centroids))
    for start in range(0, len(clustered), block_rows):
        rows = clustered[start : start + block_rows]
        own[start : start + len(rows)] = np.einsum(
            "ij,ij->i", embeddings[rows], centroids[np.searchsorted(ids, topics[rows])]
        )
    return (new_embeddings.astype(np.float32) @ centroids.T).max(axis=1), fit_threshold(own, quantile)


def median_fit_threshold(own_similarities: np.ndarray, share: float) -> float:
    """The build's fit threshold (pipeline.topics.misfits): ``share`` (0-1) of the median of the topics' own papers'
    similarities to their own topic's centroid (``own_similarities``, float, not empty). A median, unlike the low
    quantile of :func:`fit_threshold`, is not pulled down by the few unrelated papers a topic holds."""
    return share * float(np.median(own_similarities))


def member_fit(embeddings: np.ndarray, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`topic_fit`'s similarity for the atlas's own papers, each judged as if it were new.

    Returns (similarity: per document the cosine similarity to its nearest topic centroid, float64, n, its own
    topic's centroid taken without it; own: its leave-one-out similarity to its own topic's centroid, float64, n);
    both NaN for outliers (-1 in ``topics``, int n) and everywhere without topics. ``embeddings``: n x dim, unit rows.

    Leaving the paper out matters in small topics: in a topic of 5 papers a paper unrelated to the other 4 still
    has similarity about 0.45 to a centroid it is a fifth of, and 0 to the other four's.
    """
    topics = np.asarray(topics)
    similarity, own_similarity = np.full(len(topics), np.nan), np.full(len(topics), np.nan)
    ids = sorted(set(topics.tolist()) - {-1})
    if not ids:
        return similarity, own_similarity
    centroids = topic_centroids(embeddings, topics, ids).astype(np.float64)
    for position, topic in enumerate(ids):
        members = np.flatnonzero(topics == topic)
        own_similarity[members] = leave_one_out_similarities(embeddings, members)
        others = np.delete(embeddings[members].astype(np.float64) @ centroids.T, position, axis=1)
        similarity[members] = np.maximum(own_similarity[members], others.max(axis=1, initial=-1.0))
    return similarity, own_similarity
