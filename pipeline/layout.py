"""Dimension reduction with UMAP: a clustering space (5D by default) and the 2D map, with an on-disk cache.

Both fits reuse one exact neighbour search (``precomputed_knn``; UMAP docs, "Precomputed k-nearest
neighbors") and are seeded, so the same embeddings and parameters give the same coordinates. Corpora too
small for UMAP's spectral initialisation (``k >= N``) get a PCA layout instead, which needs no neighbours.

Because a seeded fit is a pure function of (embeddings, neighbour lists, parameters), its result is cached in a
:class:`LayoutStore` keyed by the SHA-256 of the embeddings and the parameters: a rebuild that changes only the
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

import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# UMAP's spectral initialisation solves an eigenproblem that fails for very small graphs; random init below this.
SPECTRAL_MIN_DOCUMENTS = 50
# Above this many documents UMAP starts from PCA (see init_method); the whole conference (11,672) stays below.
LARGE_CORPUS_DOCUMENTS = 20_000
# umap-learn kernels that are jitted without cache=True: (module, attribute).
UNCACHED_KERNELS = (
    ("umap.umap_", "smooth_knn_dist"),
    ("umap.umap_", "compute_membership_strengths"),
    ("umap.layouts", "_nb_optimize_layout_euclidean_single_epoch"),
)
# Not the parallel twin of the SGD step (``..._single_epoch_parallel``): it is jitted from the same Python function,
# and numba's on-disk index does not tell the two apart by their parallel option. A seeded UMAP (always, here)
# runs the serial one.
_numba_cache_enabled = False
# Suffix of the rebound kernels' qualified names (and so of their numba cache files).
NOGIL_SUFFIX = "__nogil"
# Held while UMAP runs its parallel numba kernels (fuzzy_simplicial_set), which two threads must not run at once.
_PARALLEL_KERNELS = threading.RLock()
_ENABLING = threading.Lock()


def enable_numba_cache() -> list[str]:
    """Make UMAP's uncached numba kernels (UNCACHED_KERNELS) cache their machine code on disk and release the GIL,
    and make ``umap.umap_.fuzzy_simplicial_set`` take a lock, so two fits may run in two threads. Idempotent.

    Each kernel is replaced, in its module, by ``numba.njit(cache=True, nogil=True, locals=..., **options)`` of a
    copy of its Python function, with the original's options (parallel, fastmath) and local types. The copy's
    qualified name ends in NOGIL_SUFFIX, which names its cache file: numba's cache index does not record nogil,
    and would otherwise hand back machine code compiled without it. Kernels that are missing or not numba
    dispatchers (another umap-learn version) are left alone. Returns the names rebound.
    """
    with _ENABLING:
        if _numba_cache_enabled:
            return []
        return _rebind_umap_kernels()


def _rebind_umap_kernels() -> list[str]:
    """The work of :func:`enable_numba_cache`, done once under its lock."""
    global _numba_cache_enabled
    import importlib
    import types

    import numba

    rebound = []
    for module_name, attribute in UNCACHED_KERNELS:
        try:
            module = importlib.import_module(module_name)
            kernel = getattr(module, attribute)
            options = {key: value for key, value in kernel.targetoptions.items() if key in ("parallel", "fastmath", "boundscheck", "error_model")}
            source = kernel.py_func
            function = types.FunctionType(source.__code__, source.__globals__, source.__name__, source.__defaults__, source.__closure__)
            function.__qualname__ = source.__qualname__ + NOGIL_SUFFIX
            setattr(module, attribute, numba.njit(cache=True, nogil=True, locals=dict(kernel.locals), **options)(function))
            rebound.append(f"{module_name}.{attribute}")
        except Exception as error:  # a different umap-learn: keep its own kernels
            log.debug("left %s.%s uncached: %s", module_name, attribute, error)
    try:
        module = importlib.import_module("umap.umap_")
        unlocked = module.fuzzy_simplicial_set

        @functools.wraps(unlocked)
        def fuzzy_simplicial_set(*args: Any, **kwargs: Any) -> Any:
            with _PARALLEL_KERNELS:
                return unlocked(*args, **kwargs)

        module.fuzzy_simplicial_set = fuzzy_simplicial_set
    except (ImportError, AttributeError) as error:
        log.debug("left umap.umap_.fuzzy_simplicial_set unlocked: %s", error)
    _numba_cache_enabled = True
    return rebound


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
) -> np.ndarray:
    """Fit UMAP (cosine) on ``embeddings`` with the given neighbour lists; returns float32, n x n_components.

    ``negative_sample_rate`` is UMAP's (default 5); the 2D map uses more (config.map_negative_sample_rate), which
    pushes unrelated papers apart and raises the map's trustworthiness.

    ``knn_indices``/``knn_similarities`` are n x k from :func:`pipeline.neighbors.cosine_knn` with k >= n_neighbors.
    ``low_memory=True`` (UMAP's default) only affects UMAP's own neighbour search, which precomputed_knn skips.
    """
    from umap import UMAP

    from pipeline.threads import limit_threads

    enable_numba_cache()
    limit_threads()  # scipy's BLAS (the spectral initialisation's eigensolver) and numba are loaded now
    n = embeddings.shape[0]
    knn = (knn_indices[:, :n_neighbors], np.clip(1.0 - knn_similarities[:, :n_neighbors], 0.0, 2.0).astype(np.float32), None)
    model = UMAP(
        n_neighbors=n_neighbors,
        n_components=n_components,
        min_dist=min_dist,
        negative_sample_rate=negative_sample_rate,
        metric="cosine",
        random_state=random_state,
        init=init_method(n),
        precomputed_knn=knn,
        low_memory=True,
        verbose=False,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        warnings.filterwarnings("ignore", message=".*precomputed_knn.*")
        return model.fit_transform(embeddings).astype(np.float32)


def init_method(n_documents: int) -> str:
    """UMAP's initialisation for ``n_documents``: "random" below SPECTRAL_MIN_DOCUMENTS, "spectral" (UMAP's default)
    up to LARGE_CORPUS_DOCUMENTS, "pca" above. From the spectral start (and from "tswspectral" alike) both UMAP fits
    took 3.8-4.4 times as long on 100,000 resampled abstracts as on 50,000 (bench/build.py --scale; 5D fit 46.6 s
    and 202.9 s); from PCA, linear in n, 14.6 s and 31.3 s, and the whole build grows as n log n."""
    if n_documents < SPECTRAL_MIN_DOCUMENTS:
        return "random"
    return "spectral" if n_documents <= LARGE_CORPUS_DOCUMENTS else "pca"


def fingerprint(embeddings: np.ndarray) -> str:
    """SHA-256 hex of an embedding matrix's shape, dtype and bytes (about 0.2 s for 50,000 x 384 float32)."""
    matrix = np.ascontiguousarray(embeddings)
    digest = hashlib.sha256(f"{matrix.shape}|{matrix.dtype}|".encode())
    digest.update(memoryview(matrix).cast("B"))
    return digest.hexdigest()


def texts_fingerprint(texts: Iterable[str], header: str = "") -> str:
    """SHA-256 hex of ``header`` then every text in order, each ended by a NUL byte: the key of what a layout store
    keeps for a corpus's texts (its tokens, its lexical fit)."""
    digest = hashlib.sha256(header.encode("utf-8"))
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def _umap_version() -> str:
    try:
        return version("umap-learn")
    except PackageNotFoundError:
        return "missing"


class LayoutStore:
    """Folder of cached arrays (neighbour lists, UMAP layouts): ``<key>.npz``, key = SHA-256 of a JSON description.

    Writes go to a temporary file renamed into place, so concurrent builds never read a partial file. Files are
    never evicted (about 2.5 MB per 12,000 documents and parameter set); delete the folder to reclaim space.
    """

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.hits: dict[str, bool] = {}

    @staticmethod
    def key(description: dict[str, Any]) -> str:
        """SHA-256 hex of ``description`` as canonical JSON."""
        return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        """The arrays stored under ``key``, or None (also for an unreadable file, which is then recomputed)."""
        path = self.folder / f"{key}.npz"
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {name: stored[name] for name in stored.files}
        except (OSError, ValueError) as error:
            log.warning("ignoring unreadable layout cache file %s: %s", path, error)
            return None

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        """Store arrays under ``key`` (atomic rename). A failure to write is logged, never raised."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f"{key}.", suffix=".tmp.npz", dir=self.folder)
            with os.fdopen(handle, "wb") as stream:
                np.savez(stream, **arrays)
            os.replace(temporary, self.folder / f"{key}.npz")
        except OSError as error:
            log.warning("could not write the layout cache in %s: %s", self.folder, error)

    def cached(self, stage: str, description: dict[str, Any], compute: Any) -> dict[str, np.ndarray]:
        """``compute()`` (a dict of arrays) unless cached under ``description``; records hit/miss in ``hits[stage]``."""
        key = self.key({"stage": stage, **description})
        found = self.get(key)
        self.hits[stage] = found is not None
        if found is None:
            found = compute()
            self.put(key, found)
        return found


def cached_umap_layout(
    store: LayoutStore | None,
    stage: str,
    embeddings_key: str,
    embeddings: np.ndarray,
    knn_indices: np.ndarray,
    knn_similarities: np.ndarray,
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    random_state: int,
    negative_sample_rate: int = 5,
) -> np.ndarray:
    """:func:`umap_layout`, through ``store`` when given. float32, n x n_components.

    The key holds ``embeddings_key`` (the :func:`fingerprint` of the embeddings; the neighbour lists are a function
    of them), every UMAP parameter, the initialisation and the umap-learn version.
    """
    from pipeline.neighbors import search_method

    def fit() -> np.ndarray:
        return umap_layout(embeddings, knn_indices, knn_similarities, n_components, n_neighbors, min_dist, random_state, negative_sample_rate)

    if store is None:
        return fit()
    description = {
        "embeddings": embeddings_key,
        "neighbours": search_method(embeddings.shape[0]),
        "n_components": n_components,
        "n_neighbors": n_neighbors,
        "min_dist": min_dist,
        "negative_sample_rate": negative_sample_rate,
        "random_state": random_state,
        "init": init_method(embeddings.shape[0]),
        "umap": _umap_version(),
    }
    return store.cached(stage, description, lambda: {"layout": fit()})["layout"].astype(np.float32)
