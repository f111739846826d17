"""pipeline.geometry.neighbors: the one top-k rule and the exact neighbour search built on it."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.geometry.neighbors import cosine_knn, top_k


def stable_top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(scores, order, axis=1)


@pytest.mark.parametrize("k", [1, 3, 7, 20, 25])
def test_top_k_is_a_stable_sort_cut_at_k_even_with_ties(k: int):
    """Rounded scores tie often, at the cut too: the lower column wins, as a stable argsort would choose."""
    rng = np.random.default_rng(0)
    scores = np.round(rng.random((50, 20)), 1).astype(np.float32)
    indices, values = top_k(scores, k)
    expected_indices, expected_values = stable_top_k(scores, min(k, 20))
    assert indices.dtype == np.int64 and values.dtype == np.float32
    assert np.array_equal(indices, expected_indices) and np.array_equal(values, expected_values)


def test_top_k_edges():
    scores = np.array([[0.5, -np.inf, 0.9, np.inf]])
    indices, values = top_k(scores, 2)
    assert indices.tolist() == [[3, 2]] and values.tolist() == [[np.inf, 0.9]]
    assert top_k(scores, 10)[0].tolist() == [[3, 2, 0, 1]]  # k clipped to n, -inf last
    empty_indices, empty_values = top_k(scores, 0)
    assert empty_indices.shape == (1, 0) and empty_values.shape == (1, 0)
    assert top_k(np.zeros((0, 4)), 2)[0].shape == (0, 2)


def test_cosine_knn_puts_each_row_first_even_among_duplicates():
    rng = np.random.default_rng(1)
    embeddings = rng.normal(size=(30, 8)).astype(np.float32)
    embeddings[7] = embeddings[3]  # an exact duplicate ties with the row itself
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    indices, similarities = cosine_knn(embeddings, 5, block_elements=64)  # several blocks
    assert (indices[:, 0] == np.arange(30)).all() and (similarities[:, 0] == 1.0).all()
    assert indices[3, 1] == 7 and indices[7, 1] == 3
    exact = embeddings @ embeddings.T
    np.fill_diagonal(exact, np.inf)
    expected, _ = stable_top_k(exact, 5)
    assert np.array_equal(indices, expected)
    assert (np.diff(similarities, axis=1) <= 1e-6).all()  # descending (a duplicate may read 1 + 1 ulp)
