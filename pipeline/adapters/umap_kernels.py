"""umap-learn's uncached numba kernels, made to cache their machine code and release the GIL: an adapter over
umap-learn internals (``umap.umap_.smooth_knn_dist``, ``compute_membership_strengths``, ``fuzzy_simplicial_set``
and ``umap.layouts._nb_optimize_layout_euclidean_single_epoch``).

UMAP compiles its numba kernels the first time a process calls them. Most are compiled with ``cache=True``, so
numba keeps them on disk (``NUMBA_CACHE_DIR``; the Makefile sets .cache/numba); three are not, which cost about 5.5
CPU seconds (20 s wall on a busy 2-core machine) in every fresh process. :func:`enable_numba_cache` rebinds those
three to the same Python functions jitted with the same options plus ``cache=True`` and ``nogil=True``: the same
code and results, compiled once per machine.

``nogil`` lets the build fit the 2D map in a second thread while the main thread fits the clustering space and
the topics: on the 11,671 titles both UMAP fits take 11.4 s together instead of 16.4 s one after the other, with
identical results. Numba's default threading layer must not be entered by two threads at once, and UMAP's two
parallel kernels run inside ``fuzzy_simplicial_set``, so :func:`enable_numba_cache` also wraps that function in a
lock. See docs/decisions/umap-kernels.md.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

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
            options = {
                key: value
                for key, value in kernel.targetoptions.items()
                if key in ("parallel", "fastmath", "boundscheck", "error_model")
            }
            source = kernel.py_func
            function = types.FunctionType(
                source.__code__, source.__globals__, source.__name__, source.__defaults__, source.__closure__
            )
            function.__qualname__ = source.__qualname__ + NOGIL_SUFFIX
            setattr(
                module, attribute, numba.njit(cache=True, nogil=True, locals=dict(kernel.locals), **options)(function)
            )
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


