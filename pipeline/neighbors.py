"""Exact nearest neighbours in the embedding space (cosine), computed once per build.

The same neighbour lists feed UMAP (``precomputed_knn``, so both UMAP fits skip their own search), the
similar-papers list of each document, and the map-faithfulness metrics.
"""

from __future__ import annotations

import numpy as np


def cosine_knn(embeddings: np.ndarray, k: int, block_rows: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of each row by cosine similarity, the row itself first.

    Parameters
    ----------
    embeddings : float32, n x dim, rows L2-normalised (so the dot product is the cosine similarity).
    k : neighbours per row including the row itself; clipped to n.
    block_rows : rows per block of the n x n similarity product (memory ~ block_rows x n x 4 bytes).

    Returns
    -------
    indices : int64, n x k; ``indices[i, 0] == i`` unless an exact duplicate row ties with it.
    similarities : float32, n x k, descending along each row.

    Exact brute force: O(n^2 dim) multiply-adds, about 2 s for 12k x 384 on 2 cores.
    """
    n = embeddings.shape[0]
    k = min(k, n)
    indices = np.empty((n, k), dtype=np.int64)
    similarities = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, block_rows):
        block = embeddings[start : start + block_rows] @ embeddings.T
        rows = np.arange(block.shape[0])
        block[rows, start + rows] = np.inf  # the point itself comes first, even among exact duplicates
        top = np.argpartition(-block, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (block.shape[0], 1))
        top_values = np.take_along_axis(block, top, axis=1)
        order = np.argsort(-top_values, axis=1, kind="stable")
        indices[start : start + block.shape[0]] = np.take_along_axis(top, order, axis=1)
        values = np.take_along_axis(top_values, order, axis=1)
        values[:, 0] = 1.0
        similarities[start : start + block.shape[0]] = values
    return indices, similarities
