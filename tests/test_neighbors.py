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
    shared_indices, shared_similarities = cosine_knn(embeddings, 5, block_elements=64, threads=3)
    assert np.array_equal(shared_indices, indices) and np.array_equal(shared_similarities, similarities)


def test_the_approximate_search_finds_nearly_every_exact_neighbour_in_cosine_knn_s_order_and_repeats_itself():
    from pipeline.geometry.neighbors import approximate_cosine_knn

    rng = np.random.default_rng(2)
    centres = rng.normal(size=(40, 48))
    embeddings = (centres[rng.integers(0, 40, 3000)] + 0.6 * rng.normal(size=(3000, 48))).astype(np.float32)
    embeddings[11] = embeddings[10]  # an exact duplicate: each still comes first in its own list
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    indices, similarities = approximate_cosine_knn(embeddings, 16)
    assert indices.shape == (3000, 16) and indices.dtype == np.int64 and similarities.dtype == np.float32
    assert (indices[:, 0] == np.arange(3000)).all() and (similarities[:, 0] == 1.0).all()
    assert indices[10, 1] == 11 and indices[11, 1] == 10
    assert (np.diff(similarities[:, 1:], axis=1) <= 0).all()
    exact, _ = cosine_knn(embeddings, 16)
    found = np.mean([len(set(a) & set(b)) / 15 for a, b in zip(indices[:, 1:].tolist(), exact[:, 1:].tolist())])
    assert found >= 0.9
    again, _ = approximate_cosine_knn(embeddings, 16)
    assert np.array_equal(indices, again)
    for parts in (1, 3):  # the search in parts, each by a thread of its own: the same lists
        in_parts, values = approximate_cosine_knn(embeddings, 16, parts=parts)
        assert np.array_equal(in_parts, indices) and np.array_equal(values, similarities)


def test_self_first_moves_the_document_to_the_front_or_in_front_of_the_last_neighbour():
    from pipeline.geometry.neighbors import self_first

    indices = np.array([[2, 0, 1], [2, 3, 0]])  # row 0 found itself second; row 1 did not find itself
    similarities = np.array([[0.9, 1.0, 0.5], [0.8, 0.8, 0.7]], dtype=np.float32)
    ordered, values = self_first(indices, similarities)
    assert ordered.tolist() == [[0, 2, 1], [1, 2, 3]]
    assert values.tolist() == [[1.0, np.float32(0.9), 0.5], [1.0, np.float32(0.8), np.float32(0.8)]]
