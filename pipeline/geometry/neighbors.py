"""Nearest neighbours in the embedding space (cosine), computed once per build, and the one top-k rule.

:func:`top_k` is how every search here picks its best entries: the neighbour lists of a build (:func:`cosine_knn`),
``place`` and ``add`` (pipeline.operations.place, pipeline.operations.add) and the semantic search the page uses
(pipeline.operations.place.semantic_search).

The same neighbour lists feed UMAP (``precomputed_knn``, so both UMAP fits skip their own search), the
similar-papers list of each document, and the map-faithfulness metrics. Up to EXACT_MAX_DOCUMENTS documents the
search is exact (brute force, O(n^2): 2 s for the whole conference); above, it is approximate: a faiss HNSW graph
(:func:`approximate_cosine_knn`; docs/decisions/neighbour-search.md), built in O(n log n).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from pipeline.store.keys import StageKey, fingerprint, stage_key
from pipeline.store.layouts import NULL_STORE, StageStore

# Above this many documents the neighbour search is approximate (see the module docstring).
EXACT_MAX_DOCUMENTS = 20_000


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and values of the ``k`` largest entries of each row of ``scores``, best first.

    Parameters
    ----------
    scores : m x n, any real dtype (similarities: larger is better), without NaN; not modified. ``-inf`` puts an
        entry last (e.g. a row's own column), ``inf`` first.
    k : entries per row; clipped to n (0 gives m x 0 results).

    Returns
    -------
    indices : int64, m x min(k, n).
    values : ``scores``' dtype (float32 when k is 0), m x min(k, n), descending along each row.

    Ties are broken by the lower column index, so the result equals a stable ``argsort(-scores)[:, :k]``
    whatever the input order; ``np.argpartition`` picks the candidates in O(n) per row, and only rows whose k-th
    value is tied with an entry left out are sorted in full.
    """
    m, n = scores.shape
    k = min(k, n)
    if k == 0:
        return np.zeros((m, 0), np.int64), np.zeros((m, 0), np.float32)
    if k < n:
        candidates = np.argpartition(scores, n - k, axis=1)[:, n - k :]
    else:
        candidates = np.broadcast_to(np.arange(n), (m, n))
    values = np.take_along_axis(scores, candidates, axis=1)
    # Best first, the lower column first among equal values (lexsort: last key is the primary one).
    order = np.lexsort((candidates, -values), axis=1)
    indices = np.take_along_axis(candidates, order, axis=1).astype(np.int64, copy=False)
    values = np.take_along_axis(values, order, axis=1)
    if k < n:
        # A k-th value tied with a value left out: argpartition may have kept a higher column; sort those rows in full.
        kth = values[:, -1:]
        ambiguous = np.flatnonzero((scores >= kth).sum(axis=1) > k)
        if len(ambiguous):
            stable = np.argsort(-scores[ambiguous], axis=1, kind="stable")[:, :k]
            indices[ambiguous] = stable
            values[ambiguous] = np.take_along_axis(scores[ambiguous], stable, axis=1)
    return indices, values


def cosine_knn(
    embeddings: np.ndarray, k: int, block_elements: int = 1 << 23, threads: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of each row by cosine similarity, the row itself first.

    Parameters
    ----------
    embeddings : float32, n x dim, rows L2-normalised (so the dot product is the cosine similarity).
    k : neighbours per row including the row itself; clipped to n.
    block_elements : similarities per block of the n x n product: rows per block = block_elements // n (at least
        16), so memory stays ~ block_elements x 13 bytes (float32 block, int64 partition, bool tie mask: :func:`top_k`)
        per thread whatever n is: about 110 MB by default, also at 50,000 documents (a fixed 2,048-row block took
        1.2 GB there).
    threads : blocks searched at once (pipeline.runtime.tasks.run_tasks; numpy releases the GIL in the product and
        the partition). Each block writes only its own rows, so the lists do not depend on it.

    Returns
    -------
    indices : int64, n x k; ``indices[i, 0] == i`` unless an exact duplicate row ties with it.
    similarities : float32, n x k, descending along each row.

    Exact brute force: O(n^2 dim) multiply-adds: about 2 CPU seconds for 11,660 x 512, 60 for 50,000 x 384.
    """
    from pipeline.runtime.tasks import run_tasks

    n = embeddings.shape[0]
    k = min(k, n)
    block_rows = max(16, block_elements // max(n, 1))
    indices = np.empty((n, k), dtype=np.int64)
    similarities = np.empty((n, k), dtype=np.float32)

    def search_block(start: int) -> None:
        block = embeddings[start : start + block_rows] @ embeddings.T
        rows = np.arange(block.shape[0])
        block[rows, start + rows] = np.inf  # the point itself comes first, even among exact duplicates
        top, values = top_k(block, k)
        values[:, 0] = 1.0
        indices[start : start + block.shape[0]] = top
        similarities[start : start + block.shape[0]] = values

    run_tasks([partial(search_block, start) for start in range(0, n, block_rows)], threads)
    return indices, similarities


# The approximate search's HNSW graph (Malkov & Yashunin 2018, faiss IndexHNSWFlat): links per node, the candidate
# list while linking and while searching. bench/neighbours.py on the six collections (49,805 x 512, 2026-12-03,
# docs/decisions/neighbour-search.md): recall@15 0.955 in 15.8 CPU s, where pynndescent found 0.940 in 44.6.
HNSW_LINKS = 16
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 48
# The search's parts, each searched by a thread of its own (faiss releases the GIL while it searches, numpy in the
# exact search's products): the build runs no other work of its own while it waits for the lists.
SEARCH_PARTS = 2


def hnsw_index(vectors: np.ndarray, k: int) -> Any:
    """A faiss HNSW graph over ``vectors`` (float32, n x dim, unit rows; inner product; HNSW_LINKS,
    HNSW_EF_CONSTRUCTION, and HNSW_EF_SEARCH or ``k`` when larger), built with one thread: faiss links nodes in a
    fixed order then, so the same rows give the same graph. faiss is left at one thread. Raises ImportError when
    faiss-cpu is not installed."""
    import faiss

    index = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_LINKS, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.hnsw.efSearch = max(HNSW_EF_SEARCH, k)
    faiss.omp_set_num_threads(1)
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def approximate_cosine_knn(embeddings: np.ndarray, k: int, parts: int = SEARCH_PARTS) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of each row by cosine similarity, found in a faiss HNSW graph (inner product on the
    unit rows; HNSW_LINKS, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH). Same shapes and conventions as :func:`cosine_knn`
    (the row itself first, similarities descending); a few true neighbours may be missed (recall above).

    The graph is built with one thread (faiss links nodes in a fixed order then, so the same rows give the same
    graph and lists in every run); the search, one query per row and independent of the others, is split into
    ``parts`` parts searched by as many threads of this function's own, each with
    pipeline.runtime.threads.thread_count faiss threads: the same lists, sooner where a core is free (the 285,717
    papers of issue 42: the search is half of the 150 s, and the build's other threads wait for its end). Raises
    ImportError when faiss-cpu is not installed.
    """
    import faiss

    from pipeline.runtime.threads import thread_count

    n = embeddings.shape[0]
    k = min(k, n)
    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    index = hnsw_index(vectors, k)
    faiss.omp_set_num_threads(thread_count())
    edges = np.linspace(0, n, max(parts, 1) + 1).astype(np.int64)
    with ThreadPoolExecutor(max_workers=max(parts, 1), thread_name_prefix="atlas-search") as searchers:
        found = list(searchers.map(lambda first, last: index.search(vectors[first:last], k), edges[:-1], edges[1:]))
    faiss.omp_set_num_threads(1)
    similarities = np.concatenate([part[0] for part in found])
    indices = np.concatenate([part[1] for part in found])
    indices, similarities = indices.astype(np.int64), similarities.astype(np.float32)
    short = np.flatnonzero((indices < 0).any(axis=1))  # a row the graph gave fewer than k neighbours: searched exactly
    if len(short):
        scores = vectors[short] @ vectors.T
        indices[short], similarities[short] = top_k(scores, k)
    return self_first(indices, similarities)


def self_first(indices: np.ndarray, similarities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour lists (int64 and float32, n x k, row i of document i) ordered as :func:`cosine_knn` orders them:
    the document itself first (similarity 1.0; put in front of the last neighbour when the search missed it), then
    the others by similarity, the lower index first among equal ones. Returns new arrays."""
    n = len(indices)
    rows = np.arange(n)
    order = np.lexsort((indices, -similarities), axis=1)
    indices, similarities = np.take_along_axis(indices, order, axis=1), np.take_along_axis(similarities, order, axis=1)
    is_self = indices == rows[:, None]
    missing = ~is_self.any(axis=1)
    indices[missing, 1:], similarities[missing, 1:] = indices[missing, :-1], similarities[missing, :-1]
    is_self[missing] = False
    is_self[missing, 0] = True
    front = np.argsort(~is_self, axis=1, kind="stable")  # the document itself first, the others in order
    indices, similarities = np.take_along_axis(indices, front, axis=1), np.take_along_axis(similarities, front, axis=1)
    indices[:, 0], similarities[:, 0] = rows, 1.0
    return indices, similarities


def search_method(n_documents: int) -> str:
    """ "exact cosine" up to EXACT_MAX_DOCUMENTS documents, else "hnsw"."""
    return "exact cosine" if n_documents <= EXACT_MAX_DOCUMENTS else "hnsw"


class Neighbours(NamedTuple):
    """The neighbour lists of a build: ``indices`` (int64, n x k) and ``similarities`` (float32, n x k) as
    :func:`cosine_knn` gives them (``neighbours[0]``, ``neighbours[1]``), and ``key``, the StageKey of stage
    "neighbours" (:func:`neighbours_key`), the input key of the stages that read them (UMAP, the map metrics)."""

    indices: np.ndarray
    similarities: np.ndarray
    key: StageKey


def neighbours_key(embeddings_key: str, n_documents: int, k: int) -> StageKey:
    """The key of stage "neighbours": the embeddings' fingerprint (pipeline.store.keys.fingerprint), ``min(k, n)``,
    the search (:func:`search_method`), this module's code, numpy and, for an approximate search, faiss-cpu."""
    method = search_method(n_documents)
    return stage_key(
        "neighbours",
        inputs={"embeddings": embeddings_key},
        params={"k": min(k, n_documents), "method": method},
        libraries=("numpy", "faiss-cpu") if method == "hnsw" else ("numpy",),
        code=(__name__,),
    )


def cached_cosine_knn(
    embeddings: np.ndarray, k: int, store: StageStore = NULL_STORE, embeddings_key: str | None = None
) -> Neighbours:
    """:func:`cosine_knn`, or :func:`approximate_cosine_knn` above EXACT_MAX_DOCUMENTS documents, through ``store``
    (pipeline.store.layouts) under :func:`neighbours_key`, so a rebuild with the same embeddings and k reads the
    lists instead of searching (hit or miss in ``store.hits["neighbours"]``).

    ``embeddings``: float32, n x dim, unit rows. ``embeddings_key``: their pipeline.store.keys.fingerprint (computed
    here when None). Returns Neighbours (indices int64 n x k, similarities float32 n x k, as cosine_knn does).
    """
    method = search_method(embeddings.shape[0])
    search = partial(cosine_knn, threads=SEARCH_PARTS) if method == "exact cosine" else approximate_cosine_knn
    key = neighbours_key(embeddings_key or fingerprint(embeddings), embeddings.shape[0], k)

    def compute() -> dict[str, np.ndarray]:
        indices, similarities = search(embeddings, k)
        return {"indices": indices, "similarities": similarities}

    found = store.cached(key, compute)
    return Neighbours(found["indices"].astype(np.int64), found["similarities"].astype(np.float32), key)
