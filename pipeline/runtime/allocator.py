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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt(3) parameter numbers from glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
# Freed heap memory above this much at the heap's top goes back to the kernel; mallopt takes an int, so 1 GiB keeps
# everything a build frees in between (its peak resident set is 2-3 GiB on the six collections).
KEPT_FREE_BYTES = 1 << 30


def keep_freed_memory() -> bool:
    """Ask glibc to serve large blocks from the heap and keep what is freed (see the module's docstring).

    Returns True when both settings took effect, False where the C library is not glibc (macOS, musl, Windows) or
    refused them; never raises. Call it once, early in a short-lived batch process.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success and 0 on error
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, KEPT_FREE_BYTES))
