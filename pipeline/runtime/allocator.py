"""Keep freed memory in the process during a batch command, so that large temporary arrays reuse pages instead of
asking the kernel for fresh ones.

By default glibc's ``malloc`` serves every block above its mmap threshold (128 KiB, growing to at most 32 MiB) with a
fresh ``mmap`` and returns it to the kernel on ``free``. A build makes many temporary arrays of tens to hundreds
of MiB (49,805 × 512 float32 is 97 MiB), so each one is faulted in and zeroed by the kernel again: on the six
collections the kernel's share of a warm build's CPU was 14-17 s of 49-62 s. ``mallopt(M_MMAP_MAX, 0)`` serves
every block from the heap and a large ``M_TRIM_THRESHOLD`` keeps freed heap memory in the process, where the next
array reuses it (mallopt(3); the same settings as the ``MALLOC_MMAP_MAX_`` and ``MALLOC_TRIM_THRESHOLD_``
environment variables, which act only when set before the process starts). The price is a higher resident set: freed
memory is not given back until the process exits, so only the command line's batch commands call it, never the
dashboard's server. Measured in docs/decisions/freed-memory.md (six collections and ICLR 2025).

A large build gives the setting up once it knows its corpus (:func:`fit_to_corpus`, called by
pipeline.operations.build after cleaning): above KEEP_FREED_MAX_DOCUMENTS documents its temporary arrays are hundreds
of MiB each (285,717 x 512 float32 is 558 MiB) and two threads allocate them at once; what the heap kept was 0.4-1.1
GB of the 290,219-paper build's resident set between stages (docs/benchmarks.md, issue 42). At 99,423 documents the
setting still saves 19 s of kernel CPU for 1.1 GB of peak (docs/decisions/freed-memory.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt(3) parameter numbers from glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4
# Freed heap memory above this much at the heap's top goes back to the kernel; mallopt takes an int, so 1 GiB keeps
# everything a build frees in between (its peak resident set is 2-3 GiB on the six collections).
KEPT_FREE_BYTES = 1 << 30
# Above this many documents a build gives the setting up (fit_to_corpus); measured in docs/benchmarks.md.
KEEP_FREED_MAX_DOCUMENTS = 100_000
# What give_back_freed_memory sets: glibc's own limits at their largest (mallopt(3)): blocks above 32 MiB (the highest
# mmap threshold glibc allows on 64-bit) get their own mmap again, unmapped on free, and the heap's top is trimmed
# above twice that, as glibc's dynamic threshold would; DEFAULT_MMAP_MAX is glibc's default count of mmap blocks.
GIVEN_BACK_MMAP_THRESHOLD = 32 << 20
GIVEN_BACK_TRIM_THRESHOLD = 64 << 20
DEFAULT_MMAP_MAX = 65_536

# Whether keep_freed_memory took effect in this process (fit_to_corpus undoes only what was done), and whether
# give_back_freed_memory did (then return_free_pages hands back what the heap holds free).
_state = {"kept": False, "given_back": False}


def _glibc() -> ctypes.CDLL | None:
    """glibc through ctypes, its mallopt(3) and malloc_trim(3) typed, or None where the C library is not glibc
    (macOS, musl, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        libc.mallopt.restype = ctypes.c_int
        libc.malloc_trim.argtypes = (ctypes.c_size_t,)
    except (OSError, AttributeError):
        return None
    return libc


def keep_freed_memory() -> bool:
    """Ask glibc to serve large blocks from the heap and keep what is freed (see the module's docstring).

    Returns True when both settings took effect, False where the C library is not glibc (macOS, musl, Windows) or
    refused them; never raises. Call it once, early in a short-lived batch process.
    """
    libc = _glibc()
    # mallopt returns 1 on success and 0 on error
    kept = (
        libc is not None and bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, KEPT_FREE_BYTES))
    )
    _state["kept"] = kept
    return kept


def give_back_freed_memory() -> bool:
    """Undo :func:`keep_freed_memory` for the rest of the process: blocks above GIVEN_BACK_MMAP_THRESHOLD bytes get
    their own mmap again (returned to the kernel on free), the heap's top is trimmed above GIVEN_BACK_TRIM_THRESHOLD,
    and the free memory the heap holds now goes back (malloc_trim(3)). Returns True when the settings took effect,
    False where the C library is not glibc or refused them; never raises."""
    libc = _glibc()
    if libc is None:
        return False
    given_back = (
        bool(libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX))
        and bool(libc.mallopt(M_MMAP_THRESHOLD, GIVEN_BACK_MMAP_THRESHOLD))
        and bool(libc.mallopt(M_TRIM_THRESHOLD, GIVEN_BACK_TRIM_THRESHOLD))
    )
    libc.malloc_trim(0)
    _state["kept"] = _state["kept"] and not given_back
    _state["given_back"] = given_back
    return given_back


def return_free_pages() -> bool:
    """After :func:`give_back_freed_memory`, hand the kernel the pages the heap holds free now (malloc_trim(3)): blocks
    under the mmap threshold, freed between two larger ones, stay resident otherwise (a c-TF-IDF refit of 285,717 papers
    left 1.1 GB so). Called at the end of every stage (pipeline.runtime.stages). Returns True when it trimmed; a no-op
    (False) in a process that keeps freed memory, or where the C library is not glibc; never raises."""
    libc = _glibc() if _state["given_back"] else None
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def fit_to_corpus(n_documents: int) -> bool:
    """For a build of ``n_documents``: above KEEP_FREED_MAX_DOCUMENTS, when :func:`keep_freed_memory` took effect in
    this process, give the setting up (:func:`give_back_freed_memory`). Returns True when it did; never raises."""
    if not _state["kept"] or n_documents <= KEEP_FREED_MAX_DOCUMENTS:
        return False
    return give_back_freed_memory()
