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

What this relies on (umap-learn 0.5.12, the pinned version; :data:`CHECKED_VERSIONS`), each checked before use by
:func:`kernel_problems`, with a warning in the build log (once) and the kernel left as umap-learn made it when a
check fails:

- each kernel of :data:`UNCACHED_KERNELS` is a numba dispatcher (``py_func``, ``targetoptions``, ``locals``) jitted
  with the options in :data:`EXPECTED_OPTIONS` (a serial SGD step, parallel ``smooth_knn_dist`` and
  ``compute_membership_strengths``);
- umap-learn calls each of them by its module-level name from :data:`KERNEL_CALLERS` (so rebinding the module
  attribute reaches them), and ``UMAP.fit`` calls ``fuzzy_simplicial_set`` the same way.

A kernel left alone still gives the same results; the map thread then holds the GIL in the SGD step and runs after
the main thread's UMAP instead of beside it (slower, not different). The contract tests (tests/test_adapters.py)
check all of this against the installed umap-learn, and that the rebound kernels give the original kernels' arrays.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

from pipeline.adapters.checks import check_version, warn_once

log = logging.getLogger(__name__)

# umap-learn versions this adapter was checked with (low inclusive, high exclusive).
CHECKED_VERSIONS = ("0.5.12", "0.6")

# umap-learn kernels that are jitted without cache=True: (module, attribute).
UNCACHED_KERNELS = (
    ("umap.umap_", "smooth_knn_dist"),
    ("umap.umap_", "compute_membership_strengths"),
    ("umap.layouts", "_nb_optimize_layout_euclidean_single_epoch"),
)

# Not the parallel twin of the SGD step (``..._single_epoch_parallel``): it is jitted from the same Python function,
# and numba's on-disk index does not tell the two apart by their parallel option. A seeded UMAP (always, here)
# runs the serial one.

# The jit options each kernel has in umap-learn (numba ``targetoptions``); rebinding keeps them. The SGD step must
# stay serial: two threads may run it at once, which numba's threading layer allows for serial kernels only.
EXPECTED_OPTIONS: dict[str, dict[str, Any]] = {
    "umap.umap_.smooth_knn_dist": {"parallel": True},
    "umap.umap_.compute_membership_strengths": {"parallel": True},
    "umap.layouts._nb_optimize_layout_euclidean_single_epoch": {"parallel": False, "fastmath": True},
}

# The umap-learn function that looks each kernel up by its module-level name when UMAP runs: rebinding the module
# attribute changes what UMAP calls only while these do.
KERNEL_CALLERS = {
    "umap.umap_.smooth_knn_dist": ("umap.umap_", "fuzzy_simplicial_set"),
    "umap.umap_.compute_membership_strengths": ("umap.umap_", "fuzzy_simplicial_set"),
    "umap.layouts._nb_optimize_layout_euclidean_single_epoch": (
        "umap.layouts",
        "_get_optimize_layout_euclidean_single_epoch_fn",
    ),
}

# The jit options copied from the original kernel to the rebound one.
COPIED_OPTIONS = ("parallel", "fastmath", "boundscheck", "error_model")

_numba_cache_enabled = False

# Suffix of the rebound kernels' qualified names (and so of their numba cache files).
NOGIL_SUFFIX = "__nogil"

# Held while UMAP runs its parallel numba kernels (fuzzy_simplicial_set), which two threads must not run at once.
_PARALLEL_KERNELS = threading.RLock()

_ENABLING = threading.Lock()

# {"module.attribute": the dispatcher umap-learn made}, for the kernels rebound in this process.
_ORIGINAL_KERNELS: dict[str, Any] = {}


def _attribute(module_name: str, attribute: str) -> Any:
    """``module_name.attribute``, importing the module. Raises ImportError or AttributeError."""
    import importlib

    return getattr(importlib.import_module(module_name), attribute)


def _code_names(function: Any) -> tuple[str, ...]:
    """The global and attribute names a Python function's code refers to (``co_names``); () for anything else."""
    code = getattr(getattr(function, "__wrapped__", function), "__code__", None)
    return tuple(code.co_names) if code is not None else ()


def kernel_problems(module_name: str, attribute: str) -> list[str]:
    """What keeps ``module_name.attribute`` from being rebound: [] when it is a numba dispatcher with the options of
    :data:`EXPECTED_OPTIONS` that its caller in :data:`KERNEL_CALLERS` looks up by name, else one line per problem."""
    from numba.extending import is_jitted

    name = f"{module_name}.{attribute}"
    try:
        kernel = _ORIGINAL_KERNELS.get(name) or _attribute(module_name, attribute)
    except (ImportError, AttributeError) as error:
        return [f"{name} is missing ({error})"]
    if not is_jitted(kernel) or not all(hasattr(kernel, key) for key in ("py_func", "targetoptions")):
        return [f"{name} is not a numba dispatcher but {type(kernel).__name__}"]
    problems = [
        f"{name} is jitted with {key}={kernel.targetoptions.get(key)!r}, not {value!r}"
        for key, value in EXPECTED_OPTIONS.get(name, {}).items()
        if bool(kernel.targetoptions.get(key)) != value
    ]
    if name not in KERNEL_CALLERS:
        return [*problems, f"{name} has no known caller in KERNEL_CALLERS"]
    caller_module, caller = KERNEL_CALLERS[name]
    try:
        calling = _attribute(caller_module, caller)
    except (ImportError, AttributeError) as error:
        problems.append(f"{caller_module}.{caller}, which calls {name}, is missing ({error})")
    else:
        if attribute not in _code_names(calling):
            problems.append(f"{caller_module}.{caller} no longer looks {attribute} up by name")
    return problems


def lock_problems() -> list[str]:
    """What keeps ``umap.umap_.fuzzy_simplicial_set`` from being wrapped in the lock: [] when it exists and
    ``UMAP.fit`` calls it by its module-level name, else one line per problem."""
    try:
        function = _attribute("umap.umap_", "fuzzy_simplicial_set")
        fit = _attribute("umap.umap_", "UMAP").fit
    except (ImportError, AttributeError) as error:
        return [f"umap.umap_.fuzzy_simplicial_set or UMAP.fit is missing ({error})"]
    if not callable(function):
        return ["umap.umap_.fuzzy_simplicial_set is not callable"]
    if "fuzzy_simplicial_set" not in _code_names(fit):
        return ["umap.umap_.UMAP.fit no longer calls fuzzy_simplicial_set by name"]
    return []


def enable_numba_cache() -> list[str]:
    """Make UMAP's uncached numba kernels (UNCACHED_KERNELS) cache their machine code on disk and release the GIL,
    and make ``umap.umap_.fuzzy_simplicial_set`` take a lock, so two fits may run in two threads. Idempotent.

    Each kernel is replaced, in its module, by ``numba.njit(cache=True, nogil=True, locals=..., **options)`` of a
    copy of its Python function, with the original's options (parallel, fastmath) and local types. The copy's
    qualified name ends in NOGIL_SUFFIX, which names its cache file: numba's cache index does not record nogil,
    and would otherwise hand back machine code compiled without it. A kernel that fails :func:`kernel_problems`
    (another umap-learn version) is left alone, with one warning in the log. Returns the names rebound
    ("module.attribute").
    """
    with _ENABLING:
        if _numba_cache_enabled:
            return []
        return _rebind_umap_kernels()


def original_kernels() -> dict[str, Any]:
    """{"module.attribute": the numba dispatcher umap-learn made} for each kernel :func:`enable_numba_cache` rebound
    in this process (empty before it ran): what the rebound kernels are compared with."""
    return dict(_ORIGINAL_KERNELS)


def _rebind_umap_kernels() -> list[str]:
    """The work of :func:`enable_numba_cache`, done once under its lock."""
    global _numba_cache_enabled
    import importlib
    import types

    import numba

    check_version(log, "umap-learn", *CHECKED_VERSIONS, __name__)
    rebound = []
    for module_name, attribute in UNCACHED_KERNELS:
        name = f"{module_name}.{attribute}"
        problems = kernel_problems(module_name, attribute)
        if problems:
            warn_once(
                log,
                f"kernel:{name}",
                "left umap-learn's %s as umap-learn made it (compiled afresh in every process and holding the GIL, "
                "so the 2D map may wait for the clustering space; the results are the same): %s",
                name,
                "; ".join(problems),
            )
            continue
        module = importlib.import_module(module_name)
        kernel = getattr(module, attribute)
        options = {key: value for key, value in kernel.targetoptions.items() if key in COPIED_OPTIONS}
        source = kernel.py_func
        function = types.FunctionType(
            source.__code__, source.__globals__, source.__name__, source.__defaults__, source.__closure__
        )
        function.__qualname__ = source.__qualname__ + NOGIL_SUFFIX
        locals_ = dict(getattr(kernel, "locals", {}) or {})
        setattr(module, attribute, numba.njit(cache=True, nogil=True, locals=locals_, **options)(function))
        _ORIGINAL_KERNELS[name] = kernel
        rebound.append(name)
    problems = lock_problems()
    if problems:
        warn_once(
            log,
            "lock:umap.umap_.fuzzy_simplicial_set",
            "left umap.umap_.fuzzy_simplicial_set without its lock: two UMAP fits in two threads may enter numba's "
            "threading layer at once: %s",
            "; ".join(problems),
        )
    else:
        module = importlib.import_module("umap.umap_")
        unlocked = module.fuzzy_simplicial_set

        @functools.wraps(unlocked)
        def fuzzy_simplicial_set(*args: Any, **kwargs: Any) -> Any:
            with _PARALLEL_KERNELS:
                return unlocked(*args, **kwargs)

        module.fuzzy_simplicial_set = fuzzy_simplicial_set  # type: ignore[attr-defined]
    _numba_cache_enabled = True
    return rebound
