"""Dimension reduction with UMAP: a clustering space (5D by default) and the 2D map, with an on-disk cache.

Both fits reuse one exact neighbour search (``precomputed_knn``; UMAP docs, "Precomputed k-nearest
neighbors") and are seeded, so the same embeddings and parameters give the same coordinates. Corpora too
small for UMAP's spectral initialisation (``k >= N``) get a PCA layout instead, which needs no neighbours.

Because a seeded fit is a pure function of (embeddings, neighbour lists, parameters, code, library versions), its
result is kept in the layout store (pipeline.store.layouts) under :func:`umap_key`: a rebuild that changes only the
HDBSCAN or topic parameters skips UMAP entirely (and never imports it).

UMAP compiles its numba kernels the first time a process calls them. Most are compiled with ``cache=True``, so
numba keeps them on disk (``NUMBA_CACHE_DIR``; the Makefile sets .cache/numba); three are not (``smooth_knn_dist``
and ``compute_membership_strengths`` of ``umap.umap_``, and the serial single-epoch SGD step of ``umap.layouts``),
which cost about 5.5 CPU seconds (20 s wall on a busy 2-core machine) in every fresh process, on top of ~2 CPU
seconds to import umap (pynndescent's cached kernels included). :func:`enable_numba_cache`
rebinds those three to the same Python functions jitted with the same options plus ``cache=True`` and
``nogil=True``: the same code and results, compiled once per machine.

``nogil`` lets the build fit the 2D map in a second thread while the main thread fits the clustering space and
the topics (a seeded UMAP runs its SGD on one core, so the second core was idle): on the 11,671 titles both UMAP
fits take 11.4 s together instead of 16.4 s one after the other, with identical results. Numba's default
threading layer must not be entered by two threads at once, and UMAP's two parallel kernels run inside
``fuzzy_simplicial_set``, so :func:`enable_numba_cache` also wraps that function in a lock.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from pipeline.adapters.umap_kernels import enable_numba_cache
from pipeline.geometry.neighbors import Neighbours
from pipeline.store.keys import StageKey, fingerprint, stage_key
from pipeline.store.layouts import StageStore

log = logging.getLogger(__name__)

# UMAP's spectral initialisation solves an eigenproblem that fails for very small graphs; random init below this.
SPECTRAL_MIN_DOCUMENTS = 50
# Above this many documents UMAP starts from PCA (see init_method); the whole conference (11,672) stays below.
LARGE_CORPUS_DOCUMENTS = 20_000


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
    negative_sample_rate: int = 5,
    n_epochs: int | None = None,
    init: np.ndarray | None = None,
) -> np.ndarray:
    """Fit UMAP (cosine) on ``embeddings`` with the given neighbour lists; returns float32, n x n_components.
    ``init``: a starting layout (float32, n x n_components; None = :func:`init_method`), e.g. a large corpus's
    landmarks' map with the other documents placed from it (pipeline.geometry.landmarks), refined for ``n_epochs``.

    ``negative_sample_rate`` is UMAP's (default 5); the 2D map uses more (config.map_negative_sample_rate), which
    pushes unrelated papers apart and raises the map's trustworthiness. ``n_epochs``: UMAP's (None = its default,
    500 epochs up to 10,000 documents and 200 above).

    ``knn_indices``/``knn_similarities`` are n x k from :func:`pipeline.geometry.neighbors.cosine_knn` with k >=
    n_neighbors. ``low_memory=True`` (UMAP's default) only affects UMAP's own neighbour search, which precomputed_knn
    skips.
    """
    from umap import UMAP

    from pipeline.runtime.threads import limit_threads

    enable_numba_cache()
    limit_threads()  # scipy's BLAS (the spectral initialisation's eigensolver) and numba are loaded now
    n = embeddings.shape[0]
    knn = (
        knn_indices[:, :n_neighbors],
        np.clip(1.0 - knn_similarities[:, :n_neighbors], 0.0, 2.0).astype(np.float32),
        None,
    )
    model = UMAP(
        n_neighbors=n_neighbors,
        n_components=n_components,
        min_dist=min_dist,
        negative_sample_rate=negative_sample_rate,
        n_epochs=n_epochs,
        metric="cosine",
        random_state=random_state,
        init=init_method(n) if init is None else init.astype(np.float32),
        precomputed_knn=knn,
        low_memory=True,
        verbose=False,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        warnings.filterwarnings("ignore", message=".*precomputed_knn.*")
        return model.fit_transform(rows_for_umap(embeddings, init)).astype(np.float32)


def rows_for_umap(embeddings: np.ndarray, init: np.ndarray | None) -> np.ndarray:
    """What :func:`umap_layout` hands UMAP as its data: ``embeddings`` (n x dim), or with a starting layout ``init`` a
    zero placeholder (float32, n x 1). Given the neighbour lists and a start, umap-learn 0.5 reads the rows only for
    their count (fuzzy_simplicial_set with knn; simplicial_set_embedding with an init array), yet copies them (X[index]
    with a list index, twice at a time and once for the whole optimisation): 558 MiB each for the map of every
    document of the 290,219-paper build. The layout is the same to the bit (tests/test_umap_layout.py)."""
    return embeddings if init is None else np.zeros((embeddings.shape[0], 1), dtype=np.float32)


def init_method(n_documents: int) -> str:
    """UMAP's initialisation for ``n_documents``: "random" below SPECTRAL_MIN_DOCUMENTS, "spectral" (UMAP's default)
    up to LARGE_CORPUS_DOCUMENTS, "pca" above. From the spectral start (and from "tswspectral" alike) both UMAP fits
    took 3.8-4.4 times as long on 100,000 resampled abstracts as on 50,000 (bench/build.py --scale; 5D fit 46.6 s
    and 202.9 s); from PCA, linear in n, 14.6 s and 31.3 s, and the whole build grows as n log n."""
    if n_documents < SPECTRAL_MIN_DOCUMENTS:
        return "random"
    return "spectral" if n_documents <= LARGE_CORPUS_DOCUMENTS else "pca"


def umap_key(
    stage: str,
    embeddings_key: str,
    neighbours: StageKey,
    n_documents: int,
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    random_state: int,
    negative_sample_rate: int,
    start: str | None = None,
    n_epochs: int | None = None,
) -> StageKey:
    """The key of a UMAP fit (stage ``stage``: "umap_cluster_space" or "map_2d"): the embeddings' fingerprint and
    the neighbour lists' key (pipeline.geometry.neighbors.neighbours_key), every UMAP parameter, the initialisation
    (:func:`init_method`, or ``start``: the fingerprint of a starting layout) and the epochs (None: UMAP's), this
    module's code (with pipeline.adapters.umap_kernels), umap-learn, numba, numpy and scipy (the spectral
    initialisation's eigensolver)."""
    extra: dict[str, Any] = {} if start is None else {"start": start}
    if start is not None or n_epochs is not None:  # UMAP's default epochs keep the key they always had
        extra["n_epochs"] = n_epochs
    return stage_key(
        stage,
        inputs={"embeddings": embeddings_key, "neighbours": neighbours},
        params={
            "n_components": n_components,
            "n_neighbors": n_neighbors,
            "min_dist": min_dist,
            "negative_sample_rate": negative_sample_rate,
            "random_state": random_state,
            "init": init_method(n_documents),
            **extra,
        },
        libraries=("umap-learn", "numba", "numpy", "scipy"),
        code=(__name__,),
    )


def cached_umap_layout(
    store: StageStore,
    stage: str,
    embeddings_key: str,
    embeddings: np.ndarray,
    neighbours: Neighbours,
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    random_state: int,
    negative_sample_rate: int = 5,
    start: np.ndarray | None = None,
    n_epochs: int | None = None,
) -> np.ndarray:
    """:func:`umap_layout` of ``embeddings`` (float32, n x dim) with ``neighbours`` (pipeline.geometry.neighbors,
    k >= n_neighbors), through ``store`` (pipeline.store.layouts) under :func:`umap_key` (hit or miss in
    ``store.hits[stage]``). ``embeddings_key``: the embeddings' pipeline.store.keys.fingerprint. ``start`` and
    ``n_epochs``: a starting layout (float32, n x n_components) refined for that many epochs (see umap_layout).
    float32, n x n_components.
    """

    def fit() -> dict[str, np.ndarray]:
        layout = umap_layout(
            embeddings,
            neighbours.indices,
            neighbours.similarities,
            n_components,
            n_neighbors,
            min_dist,
            random_state,
            negative_sample_rate,
            n_epochs,
            start,
        )
        return {"layout": layout}

    key = umap_key(
        stage,
        embeddings_key,
        neighbours.key,
        embeddings.shape[0],
        n_components,
        n_neighbors,
        min_dist,
        random_state,
        negative_sample_rate,
        None if start is None else fingerprint(np.ascontiguousarray(start, dtype=np.float32)),
        n_epochs,
    )
    return store.cached(key, fit)["layout"].astype(np.float32)
