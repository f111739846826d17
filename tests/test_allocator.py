"""pipeline.runtime.allocator: after keep_freed_memory, a large array comes from the heap and its pages stay in the
process once it is freed, so the next one reuses them.

Each case runs in a fresh Python process (the setting lasts for the process) that allocates a 256 MiB array, frees
it, and reads glibc's own account of its memory with ``mallinfo2(3)``: ``hblkhd``, the bytes held in blocks served
by ``mmap``, and ``arena``, the bytes of the heap. Those are the allocator's bookkeeping, the same on any CPU and
under any load (unlike page-fault counts, which depend on the kernel's huge pages).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

ALLOCATOR_ACCOUNT = """
import ctypes, json, sys
import numpy as np
from pipeline.runtime.allocator import keep_freed_memory

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
kept = keep_freed_memory() if sys.argv[1] == "keep" else None
array = np.ones(1 << 25)  # 256 MiB of float64
held = libc.mallinfo2()
del array
freed = libc.mallinfo2()
print(json.dumps({"kept": kept, "mmapped_while_held": held.hblkhd, "heap_while_held": held.arena,
                  "heap_after_free": freed.arena}))
"""

ARRAY_BYTES = 8 << 25


def allocator_account(mode: str) -> dict:
    """glibc's account around one 256 MiB array in a fresh process, with (``keep``) or without keep_freed_memory."""
    done = subprocess.run(
        [sys.executable, "-c", ALLOCATOR_ACCOUNT, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt and mallinfo2 are glibc's")
def test_freed_arrays_stay_in_the_heap_after_keep_freed_memory_and_go_back_without() -> None:
    kept, default = allocator_account("keep"), allocator_account("default")
    assert kept["kept"] is True and default["kept"] is None
    # without: the array is a block of its own mmap, gone from the process when freed
    assert default["mmapped_while_held"] >= ARRAY_BYTES
    assert default["heap_after_free"] < ARRAY_BYTES
    # with: it is served from the heap, and the heap keeps its pages after the free for the next array
    assert kept["mmapped_while_held"] < ARRAY_BYTES and kept["heap_while_held"] >= ARRAY_BYTES
    assert kept["heap_after_free"] >= ARRAY_BYTES
