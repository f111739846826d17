"""Dimension reduction with UMAP: a clustering space (5D by default) and the 2D map.

Both fits reuse one exact neighbour search (``precomputed_knn``; UMAP docs, "Precomputed k-nearest
neighbors") and are seeded, so the same embeddings and parameters give the same coordinates. Corpora too
small for UMAP's spectral initialisation (``k >= N``) get a PCA layout instead, which needs no neighbours.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np

log = logging.getLogger(__name__)

# UMAP's spectral initialisation solves an eigenproblem that fails for very small graphs; random init below this.
SPECTRAL_MIN_DOCUMENTS = 50


def pca_layout(embeddings: np.ndarray, n_components: int) -> np.ndarray:
    """Project onto the first principal components, padded with zeros when n is too small. float32, n x n_components."""
    n = embeddings.shape[0]
    coordinates = np.zeros((n, n_components), dtype=np.float32)
    if n < 2:
        return coordinates
    centred = embeddings - embeddings.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    usable = min(n_components, components.shape[0])
    coordinates[:, :usable] = centred @ components[:usable].T
    return coordinates


def umap_layout(
    embeddings: np.ndarray,
    knn_indices: np.ndarray,
    knn_similarities: np.ndarray,
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    random_state: int,
) -> np.ndarray:
    """Fit UMAP (cosine) on ``embeddings`` with the given neighbour lists; returns float32, n x n_components.

    ``knn_indices``/``knn_similarities`` are n x k from :func:`pipeline.neighbors.cosine_knn` with k >= n_neighbors.
    """
    from umap import UMAP

    n = embeddings.shape[0]
    knn = (knn_indices[:, :n_neighbors], np.clip(1.0 - knn_similarities[:, :n_neighbors], 0.0, 2.0).astype(np.float32), None)
    model = UMAP(
        n_neighbors=n_neighbors,
        n_components=n_components,
        min_dist=min_dist,
        metric="cosine",
        random_state=random_state,
        init="spectral" if n >= SPECTRAL_MIN_DOCUMENTS else "random",
        precomputed_knn=knn,
        low_memory=True,
        verbose=False,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        warnings.filterwarnings("ignore", message=".*precomputed_knn.*")
        return model.fit_transform(embeddings).astype(np.float32)
