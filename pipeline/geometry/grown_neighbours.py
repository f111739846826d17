"""The nearest papers an ``add`` needs, in one pass: for each new paper its nearest atlas papers (``place``'s vote)
and its nearest papers of the grown atlas (its similar papers, the journeys' candidates, whether it lies in new
territory), and for each atlas paper its nearest new papers (merged into its stored similar papers).

Every list is what pipeline.geometry.neighbors.top_k gives over the whole row (the same entries, ties to the lower
row), but the similarities are computed in blocks of new papers, so memory stays at a block's rows against the grown
atlas instead of every new paper against every paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class NearestLists:
    """The nearest papers an add needs, found in one blocked pass (:func:`nearest_lists`).

    Attributes
    ----------
    atlas_indices, atlas_scores : int64 and float32, m x k: per new paper its k most cosine-similar atlas papers
        (rows 0..n-1 of the atlas), best first: the neighbours ``place``'s rule votes with.
    new_indices, new_scores : m x k: per new paper its k most similar other papers of the grown atlas (rows: old
        0..n-1, new n..n+m-1), best first.
    old_indices, old_scores : n x k: per old paper its k most similar new papers (0..m-1).
    """

    atlas_indices: np.ndarray
    atlas_scores: np.ndarray
    new_indices: np.ndarray
    new_scores: np.ndarray
    old_indices: np.ndarray
    old_scores: np.ndarray


def _merged_top_k(
    indices: tuple[np.ndarray, np.ndarray], scores: tuple[np.ndarray, np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of two candidate lists per row (each best first, the first list's indices all below the
    second's): the same entries, in the same order, as pipeline.geometry.neighbors.top_k over the whole row."""
    from pipeline.geometry.neighbors import top_k

    candidates, values = np.hstack(indices), np.hstack(scores)
    positions, best = top_k(values, k)
    return np.take_along_axis(candidates, positions, axis=1), best


def nearest_lists(embeddings: np.ndarray, new_embeddings: np.ndarray, k: int, block_rows: int = 1024) -> NearestLists:
    """:class:`NearestLists` of ``k`` entries for the atlas's papers (``embeddings``, n x dim) and the new ones
    (``new_embeddings``, m x dim), unit rows, by pipeline.geometry.neighbors.top_k, in one pass over blocks of
    ``block_rows`` new papers: each block's similarities to the atlas give its papers' nearest atlas papers and,
    read by column, the atlas papers' nearest new papers of the block (merged with the earlier blocks'). Memory
    stays at block_rows x (n + m) similarities (ICLR 2026 onto 2024-2025: about 150 MB, not 4.6 GB)."""
    from pipeline.geometry.neighbors import top_k

    n, m = len(embeddings), len(new_embeddings)
    old, new = embeddings.astype(np.float32), new_embeddings.astype(np.float32)
    atlas_parts, new_parts = [], []
    old_indices, old_scores = np.zeros((n, 0), np.int64), np.zeros((n, 0), np.float32)
    for start in range(0, m, block_rows):
        block = new[start : start + block_rows]
        to_old, to_new = block @ old.T, block @ new.T
        rows = np.arange(len(block))
        to_new[rows, start + rows] = -np.inf  # never oneself
        nearest_old, nearest_new = top_k(to_old, k), top_k(to_new, k)
        atlas_parts.append(nearest_old)
        new_parts.append(_merged_top_k((nearest_old[0], nearest_new[0] + n), (nearest_old[1], nearest_new[1]), k))
        by_column = top_k(np.ascontiguousarray(to_old.T), k)
        old_indices, old_scores = _merged_top_k((old_indices, by_column[0] + start), (old_scores, by_column[1]), k)
    atlas_indices, atlas_scores = _stacked(atlas_parts, min(k, n))
    new_indices, new_scores = _stacked(new_parts, k)
    return NearestLists(atlas_indices, atlas_scores, new_indices, new_scores, old_indices, old_scores)


def _stacked(parts: list[tuple[np.ndarray, np.ndarray]], width: int) -> tuple[np.ndarray, np.ndarray]:
    """The blocks' (indices, scores) stacked; (0 x width) arrays without blocks."""
    if not parts:
        return np.zeros((0, width), np.int64), np.zeros((0, width), np.float32)
    return np.vstack([part[0] for part in parts]), np.vstack([part[1] for part in parts])
