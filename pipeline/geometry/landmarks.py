"""Fit on a sample, place the rest: the clustering space, the clusters and the map of a large corpus.

Above ``BuildConfig.fit_sample_size`` documents, both UMAP fits and HDBSCAN run on a sample of that many documents,
the *landmarks*, and every other document is placed from its ``k`` nearest landmarks in the representation:

- its position (in the 2D map) is the weighted mean of theirs, the start UMAP's own ``transform`` gives a new point
  (umap-learn, ``UMAP.transform``: each new point starts at the membership-weighted mean of its neighbours' embedding);
- its cluster is their weighted vote, HDBSCAN's outlier label -1 voting as a class of its own, and its membership
  strength the winner's share of the weight times the winners' mean strength.

The weights are UMAP's fuzzy memberships in simplified form: ``exp(-(d_j - d_1) / sigma)`` with ``d = 1 - cosine
similarity``, ``d_1`` the nearest landmark's distance and ``sigma`` the mean of ``d_j - d_1`` over the ``k`` (McInnes,
Healy & Melville 2018, section 3.1, with the mean gap standing in for the binary search of ``sigma``).

The landmarks are the first ``fit_sample_size`` documents of the build's canonical order, which sorts documents by the
SHA-256 of their text (pipeline.operations.build.canonical_order): a uniform random sample that does not depend on
the input's row order, so the same texts give the same atlas in any order. The neighbour search is faiss's HNSW
graph over the landmarks (pipeline.geometry.neighbors), built once and searched by the landmarks (their neighbour
lists for UMAP) and by the other documents (their landmarks); both are kept in the layout store under
:func:`landmark_key`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from pipeline.geometry.neighbors import Neighbours, hnsw_index, self_first, top_k
from pipeline.store.keys import StageKey, stage_key
from pipeline.store.layouts import StageStore

# Rows of the other documents weighed at once when voting: bounds the vote's table (rows x clusters, float32).
VOTE_CHUNK_ROWS = 20_000


class Landmarks(NamedTuple):
    """The sample a large build fits on, and how the other documents hang from it.

    ``size``: the landmarks are rows 0..size-1 of the canonical order; ``neighbours``: the landmarks' own neighbour
    lists (Neighbours, indices into the landmarks, size x k, the row itself first), which UMAP reads;
    ``rest_indices`` (int64, (n - size) x k, into the landmarks, nearest first) and ``rest_weights`` (float32, the
    same shape, each row summing to 1): each other document's nearest landmarks and their weights."""

    size: int
    neighbours: Neighbours
    rest_indices: np.ndarray
    rest_weights: np.ndarray


def fitted_rows(
    embeddings: np.ndarray, neighbour_lists: Callable[[], Neighbours], landmarks: Landmarks | None
) -> tuple[np.ndarray, Neighbours]:
    """What UMAP fits on: every row with the build's neighbour lists (``neighbour_lists()``, called only then), or
    with ``landmarks`` the landmarks' rows (the first ``landmarks.size``) with their own lists."""
    if landmarks is None:
        return embeddings, neighbour_lists()
    return embeddings[: landmarks.size], landmarks.neighbours


def landmark_key(embeddings_key: str, n_documents: int, size: int, k: int) -> StageKey:
    """The key of stage "landmark_neighbours": the embeddings' fingerprint, n, the sample's size, k, this module's
    code (with pipeline.geometry.neighbors', whose graph it builds), numpy and faiss-cpu."""
    return stage_key(
        "landmark_neighbours",
        inputs={"embeddings": embeddings_key},
        params={"n": n_documents, "size": size, "k": k, "method": "hnsw"},
        libraries=("numpy", "faiss-cpu"),
        code=(__name__, "pipeline.geometry.neighbors"),
    )


def membership_weights(similarities: np.ndarray) -> np.ndarray:
    """Weights (float32, m x k, rows summing to 1) of each row's ``k`` nearest landmarks from their cosine
    similarities (m x k, descending): ``exp(-(d_j - d_1) / sigma)`` as the module docstring says; equal weights
    where every landmark is as near as the first."""
    distances = 1.0 - similarities.astype(np.float64)
    gaps = np.maximum(distances - distances[:, :1], 0.0)
    sigma = gaps.mean(axis=1, keepdims=True)
    weights = np.exp(-gaps / np.where(sigma > 0, sigma, 1.0))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def search_landmarks(embeddings: np.ndarray, size: int, k: int) -> dict[str, np.ndarray]:
    """The HNSW search of the module docstring over unit rows ``embeddings`` (float32, n x dim): {"indices",
    "similarities"} of the landmarks (size x k, the row itself first) and {"rest_indices", "rest_similarities"}
    ((n - size) x k) of the others. The graph is built with one thread (the same rows give the same graph); the
    searches use pipeline.runtime.threads.thread_count threads. Raises ImportError without faiss-cpu."""
    import faiss

    from pipeline.runtime.threads import thread_count

    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    sample, rest = vectors[:size], vectors[size:]
    k = min(k, size)
    index = hnsw_index(sample, k)
    faiss.omp_set_num_threads(thread_count())
    try:
        found: dict[str, np.ndarray] = {}
        for name, queries in (("", sample), ("rest_", rest)):
            similarities, indices = index.search(queries, k)
            indices, similarities = indices.astype(np.int64), similarities.astype(np.float32)
            short = np.flatnonzero((indices < 0).any(axis=1))  # fewer than k found: searched exactly
            if len(short):
                indices[short], similarities[short] = top_k(queries[short] @ sample.T, k)
            found[f"{name}indices"], found[f"{name}similarities"] = indices, similarities
    finally:
        faiss.omp_set_num_threads(1)
    found["indices"], found["similarities"] = self_first(found["indices"], found["similarities"])
    return found


def cached_landmarks(
    embeddings: np.ndarray,
    size: int,
    k: int,
    store: StageStore,
    embeddings_key: str,
    search: Callable[[np.ndarray, int, int], dict[str, np.ndarray]] = search_landmarks,
) -> Landmarks:
    """:func:`search_landmarks` (or ``search``, which must give the same: pipeline.partitions.run's search on a Dask
    cluster) through ``store`` under :func:`landmark_key`, as :class:`Landmarks`. ``embeddings``: float32, n x dim,
    unit rows, in the canonical order; ``size`` < n landmarks; ``k`` neighbours."""
    key = landmark_key(embeddings_key, embeddings.shape[0], size, k)
    found = store.cached(key, lambda: search(embeddings, size, k))
    neighbours = Neighbours(found["indices"].astype(np.int64), found["similarities"].astype(np.float32), key)
    rest_similarities = found["rest_similarities"].astype(np.float32)
    return Landmarks(size, neighbours, found["rest_indices"].astype(np.int64), membership_weights(rest_similarities))


def place_rest(landmarks: Landmarks, layout: np.ndarray) -> np.ndarray:
    """Every document's position: the landmarks' ``layout`` (float32, size x d) followed by each other document's
    weighted mean of its landmarks' positions. float32, n x d, in the canonical order."""
    placed = np.einsum("mk,mkd->md", landmarks.rest_weights, layout[landmarks.rest_indices])
    return np.concatenate([layout, placed.astype(np.float32)])


def vote_rest(landmarks: Landmarks, labels: np.ndarray, strengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every document's cluster and membership strength: the landmarks' own (``labels`` int64 size, -1 an outlier;
    ``strengths`` float32 size) followed by each other document's weighted vote of its landmarks (module docstring).
    Ties go to the lower label. Returns (int64 n, float32 n) in the canonical order."""
    classes = labels + 1  # -1 (outlier) votes as class 0
    n_classes = int(classes.max()) + 1 if len(classes) else 1
    rest_labels, rest_strengths = [], []
    for start in range(0, len(landmarks.rest_indices), VOTE_CHUNK_ROWS):
        indices = landmarks.rest_indices[start : start + VOTE_CHUNK_ROWS]
        weights = landmarks.rest_weights[start : start + VOTE_CHUNK_ROWS]
        votes = np.zeros((len(indices), n_classes), dtype=np.float32)
        rows = np.repeat(np.arange(len(indices)), indices.shape[1])
        np.add.at(votes, (rows, classes[indices].ravel()), weights.ravel())
        winner = votes.argmax(axis=1)
        share = votes[np.arange(len(indices)), winner]
        is_winner = classes[indices] == winner[:, None]
        mean_strength = (strengths[indices] * is_winner).sum(axis=1) / np.maximum(is_winner.sum(axis=1), 1)
        rest_labels.append(winner - 1)
        rest_strengths.append(np.where(winner > 0, share * mean_strength, 0.0))
    every_label = np.concatenate([labels.astype(np.int64), *[part.astype(np.int64) for part in rest_labels]])
    every_strength = np.concatenate(
        [strengths.astype(np.float32), *[part.astype(np.float32) for part in rest_strengths]]
    )
    return every_label, every_strength
