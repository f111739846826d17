"""The landmark search over row partitions: each document outside the sample finds its ``k`` nearest landmarks in
the landmarks' HNSW graph (pipeline.geometry.landmarks), one Dask task per partition of its rows.

The graph is built once, on the driver, exactly as :func:`pipeline.geometry.landmarks.search_landmarks` builds it
(faiss ``IndexHNSWFlat``, inner product on unit rows, HNSW_LINKS links, efConstruction HNSW_EF_CONSTRUCTION, one
thread so the same rows give the same graph); the landmarks search it there too (their own lists, size x k, for
UMAP: a fixed cost whatever the corpus). It is then written with ``faiss.serialize_index`` (uint8: the landmarks'
vectors, 4 x dim bytes each, plus about 2 x HNSW_LINKS x 4 bytes of links each: 108 MB for 50,000 x 512) and sent
to every worker once (``client.scatter(..., broadcast=True)``); a worker reads it back once and keeps it for its
later tasks (:func:`worker_index`). An HNSW search answers each query on its own (efSearch fixed, no randomness),
so a partition's rows get the same indices and similarities as in the single-process search, whatever the
partitions; a row the graph gives fewer than k landmarks is searched exactly against the landmarks' vectors, read
back from the graph's storage when such a row comes.

A partition's rows come from the driver (an array, scattered) or, on a real cluster, from an ``.npy`` file every
worker can read (a shared path): each task then maps only its own rows (``np.load(mmap_mode="r")``).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from pipeline.geometry.landmarks import membership_weights
from pipeline.geometry.neighbors import HNSW_EF_SEARCH, hnsw_index, self_first, top_k
from pipeline.partitions.cluster import DEFAULT_PARTITION_ROWS, partition_bounds, send

# Graphs a worker keeps read back (by their digest): the one of the build under way, and one more.
KEPT_INDEXES = 2
_INDEXES: OrderedDict[str, Any] = OrderedDict()


class SerialisedIndex(NamedTuple):
    """The landmarks' graph as bytes: ``data`` (uint8, faiss.serialize_index), ``digest`` (its SHA-256, the key under
    which a worker keeps it read back), ``k`` (neighbours searched) and ``size`` (landmarks)."""

    data: np.ndarray
    digest: str
    k: int
    size: int


class RestSearch(NamedTuple):
    """The other documents' nearest landmarks, rows in order: ``indices`` (int64, m x k, into the landmarks,
    nearest first), ``similarities`` (float32, m x k, descending) and ``weights`` (float32, m x k, rows summing to 1:
    pipeline.geometry.landmarks.membership_weights)."""

    indices: np.ndarray
    similarities: np.ndarray
    weights: np.ndarray


def landmark_index(sample: np.ndarray, k: int) -> Any:
    """The landmarks' faiss graph as search_landmarks builds it. ``sample``: float32, size x dim, unit rows; ``k``
    already clipped to the sample's size. Raises ImportError without faiss-cpu."""
    return hnsw_index(sample, k)


def search_index(index: Any, sample: np.ndarray | None, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(int64 indices, float32 similarities), m x k, of ``queries`` (float32, m x dim) in ``index``, as
    search_landmarks searches: a row with fewer than k results found exactly against ``sample`` (size x dim; None:
    read back from the graph's storage only when such a row comes)."""
    similarities, indices = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    indices, similarities = indices.astype(np.int64), similarities.astype(np.float32)
    short = np.flatnonzero((indices < 0).any(axis=1))
    if len(short):
        vectors = index.reconstruct_n(0, index.ntotal) if sample is None else sample
        indices[short], similarities[short] = top_k(queries[short] @ vectors.T, k)
    return indices, similarities


def own_neighbours(embeddings: np.ndarray, size: int, k: int) -> tuple[SerialisedIndex, np.ndarray, np.ndarray]:
    """On the driver: the graph over the first ``size`` rows of ``embeddings`` (float32, n x dim, unit rows), the
    landmarks' own neighbour lists (int64 and float32, size x min(k, size), the row itself first: the "indices" and
    "similarities" of search_landmarks) and the graph serialised. The search uses
    pipeline.runtime.threads.thread_count threads."""
    import faiss

    from pipeline.runtime.threads import thread_count

    sample = np.ascontiguousarray(embeddings[:size], dtype=np.float32)
    k = min(k, size)
    index = landmark_index(sample, k)
    faiss.omp_set_num_threads(thread_count())
    try:
        indices, similarities = search_index(index, sample, sample, k)
    finally:
        faiss.omp_set_num_threads(1)
    indices, similarities = self_first(indices, similarities)
    data = faiss.serialize_index(index)
    return SerialisedIndex(data, hashlib.sha256(data.tobytes()).hexdigest(), k, size), indices, similarities


def worker_index(serialised: SerialisedIndex) -> Any:
    """On a worker: the graph read back (once per worker and graph, then kept: KEPT_INDEXES)."""
    import faiss

    kept = _INDEXES.get(serialised.digest)
    if kept is None:
        index: Any = faiss.deserialize_index(serialised.data)
        index.hnsw.efSearch = max(HNSW_EF_SEARCH, serialised.k)
        kept = _INDEXES[serialised.digest] = index
        while len(_INDEXES) > KEPT_INDEXES:
            _INDEXES.popitem(last=False)
    _INDEXES.move_to_end(serialised.digest)
    return kept


def rows_of(source: np.ndarray | str, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop`` of ``source``: an array (a partition sent by the driver) or the path of an ``.npy`` file
    (memory-mapped: only these rows are read)."""
    if isinstance(source, str):
        return np.asarray(np.load(source, mmap_mode="r")[start:stop], dtype=np.float32)
    return source[start:stop]


def search_partition(serialised: SerialisedIndex, source: np.ndarray | str, start: int, stop: int) -> RestSearch:
    """One task: the nearest landmarks of rows ``start..stop`` of ``source`` (see :func:`rows_of`), searched
    with one OpenMP thread (the worker's one task thread), with their membership weights."""
    import faiss

    index = worker_index(serialised)
    faiss.omp_set_num_threads(1)
    indices, similarities = search_index(index, None, rows_of(source, start, stop), serialised.k)
    return RestSearch(indices, similarities, membership_weights(similarities))


def search_rest_partitioned(
    client: Any,
    embeddings: np.ndarray,
    size: int,
    k: int,
    partition_rows: int = DEFAULT_PARTITION_ROWS,
    rows_path: str | None = None,
) -> tuple[SerialisedIndex, np.ndarray, np.ndarray, list[Any], list[tuple[int, int]]]:
    """The landmarks' own lists on the driver and the other rows' searches as Dask tasks, left on the cluster.

    ``embeddings``: float32, n x dim, unit rows, canonical order, the first ``size`` (< n) the landmarks.
    ``rows_path``: an ``.npy`` file of the same rows that every worker can read; when given, the tasks read their rows
    from it instead of receiving them from the driver. Returns (the serialised graph, the landmarks' own indices and
    similarities, size x k, the futures of :class:`RestSearch`, one per partition of rows size..n, and those
    partitions' bounds, rows counted from ``size``). Raises ValueError when size is not in 1..n-1."""
    n = embeddings.shape[0]
    if not 0 < size < n:
        raise ValueError(f"the landmarks must be 1 to {n - 1} of the {n} rows, not {size}")
    serialised, indices, similarities = own_neighbours(embeddings, size, k)
    graph = send(client, serialised, broadcast=True)
    bounds = partition_bounds(n - size, partition_rows)
    if rows_path is not None:
        sources: list[Any] = [rows_path] * len(bounds)
        starts = [size + start for start, _ in bounds]
        stops = [size + stop for _, stop in bounds]
    else:
        sources = send(client, [embeddings[size + start : size + stop] for start, stop in bounds])
        starts, stops = [0] * len(bounds), [stop - start for start, stop in bounds]
    futures = client.map(search_partition, [graph] * len(bounds), sources, starts, stops, pure=False)
    return serialised, indices, similarities, futures, bounds


def gather_rest(client: Any, futures: list[Any], k: int) -> RestSearch:
    """The partitions' searches (:func:`search_rest_partitioned`) gathered on the driver and joined in row order."""
    parts: list[RestSearch] = client.gather(futures)
    if not parts:
        empty = np.zeros((0, k), np.float32)
        return RestSearch(np.zeros((0, k), np.int64), empty, empty.copy())
    return RestSearch(*(np.concatenate([getattr(part, name) for part in parts]) for name in RestSearch._fields))
