"""How many threads the numerical libraries may use: one each, by default, so that a build stays fast on a busy machine.

On this project's 2-core machines the build already runs two threads of its own (the 2D map is drawn while the
topics are fitted; pipeline.operations.build). A library thread pool on top of that oversubscribes the cores, and pools
that spin while they wait collapse when other processes compete: embedding 300 titles with the MiniLM transformer took
3.0x longer beside two busy processes with torch's default 2 threads and 1.6x with 1 thread, and 1 thread was as
fast as 2 on a quiet machine (5.2 s against 5.5 s; issue "The whole conference in a minute"). So every runtime
that can start a pool is limited here, through its public API:

- BLAS/OpenMP pools (numpy, scipy, scikit-learn) with threadpoolctl's ``threadpool_limits``;
- PyTorch with ``torch.set_num_threads`` (only when torch is imported already or is about to be used);
- ONNX Runtime through its session options (pipeline.represent.encoder_backends.OnnxEncoder reads :func:`thread_count`);
- numba (UMAP's parallel kernels) with ``numba.set_num_threads``.

``ATLAS_THREADS`` overrides the count (e.g. 2 on an otherwise idle machine; measured in
``bench/build.py --contention``).

The count is also part of what makes a build reproducible: a build's floats depend on the BLAS thread count (the
neighbour search's matrix products, UMAP's spectral initialisation, an ARPACK eigensolver over BLAS), and a command
line build with two BLAS threads gave 57 topics on the whole conference where one with one thread gave 59. So
``pipeline.operations.build.run_build`` and ``pipeline.geometry.umap_layout.umap_layout`` limit the pools themselves,
whoever calls them, and the command line sets the BLAS variables before any library is loaded.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from pipeline.runtime.settings import settings


def thread_count() -> int:
    """Threads each library pool may use: ``ATLAS_THREADS`` when set to a positive integer, else 1
    (pipeline.runtime.settings.DEFAULT_THREADS)."""
    return settings().threads  # pipeline.runtime.settings


def limit_threads(count: int | None = None) -> int:
    """Limit the BLAS/OpenMP pools, torch (if imported) and numba (if imported) to ``count`` threads (default
    :func:`thread_count`) for the rest of the process. Returns the count. Call again after importing torch or numba."""
    from threadpoolctl import threadpool_limits

    count = count or thread_count()
    threadpool_limits(limits=count)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(count)
    if "numba" in sys.modules:
        import numba

        # numba.config sets its NUMBA_* attributes at import time (from the environment), out of mypy's sight.
        numba.set_num_threads(min(count, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    return count


BLAS_ENVIRONMENT = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_threads_of_this_process() -> None:
    """Before numpy is loaded (the command line's first step): set the BLAS/OpenMP thread variables to
    :func:`thread_count` unless already set, so every BLAS library the process loads later starts with that many
    threads (threadpoolctl can limit only the libraries already loaded)."""
    for variable in BLAS_ENVIRONMENT:
        os.environ.setdefault(variable, str(thread_count()))


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Run the enclosed block with one BLAS/OpenMP thread (so a float result does not depend on the thread count)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield
