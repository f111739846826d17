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
from pipeline.runtime.allocator import KEEP_FREED_MAX_DOCUMENTS, fit_to_corpus, keep_freed_memory

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
kept = keep_freed_memory() if sys.argv[1] != "default" else None
sizes = {"small": KEEP_FREED_MAX_DOCUMENTS, "large": KEEP_FREED_MAX_DOCUMENTS + 1}
given_back = fit_to_corpus(sizes[sys.argv[1]]) if sys.argv[1] in sizes else None
array = np.ones(1 << 25)  # 256 MiB of float64
held = libc.mallinfo2()
del array
freed = libc.mallinfo2()
print(json.dumps({"kept": kept, "given_back": given_back, "mmapped_while_held": held.hblkhd,
                  "heap_while_held": held.arena, "heap_after_free": freed.arena}))
"""

ARRAY_BYTES = 8 << 25


def allocator_account(mode: str) -> dict:
    """glibc's account around one 256 MiB array in a fresh process, with (``keep``) or without (``default``)
    keep_freed_memory, or with it and then fit_to_corpus of a build of KEEP_FREED_MAX_DOCUMENTS (``small``) or one
    more (``large``)."""
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt and mallinfo2 are glibc's")
def test_a_build_above_the_size_limit_gives_freed_arrays_back_and_one_at_it_keeps_them() -> None:
    small, large = allocator_account("small"), allocator_account("large")
    assert small["kept"] is large["kept"] is True
    assert small["given_back"] is False and small["mmapped_while_held"] < ARRAY_BYTES
    assert small["heap_after_free"] >= ARRAY_BYTES
    # above the limit: the array is a block of its own mmap again, gone from the process when freed
    assert large["given_back"] is True and large["mmapped_while_held"] >= ARRAY_BYTES
    assert large["heap_after_free"] < ARRAY_BYTES


FREE_PAGES_ACCOUNT = """
import json, sys
import numpy as np
from pipeline.runtime.allocator import KEEP_FREED_MAX_DOCUMENTS, fit_to_corpus, keep_freed_memory, return_free_pages

def resident_mib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024

keep_freed_memory()
fit_to_corpus(KEEP_FREED_MAX_DOCUMENTS + int(sys.argv[1] == "large"))
blocks = [np.ones(1 << 17) for _ in range(256)]  # 256 blocks of 1 MiB: under the mmap threshold, in the heap
del blocks[::2]  # every other one freed: 128 holes of 1 MiB between live blocks, none of them the heap's top
before = resident_mib()
trimmed = return_free_pages()
print(json.dumps({"trimmed": trimmed, "released_mib": before - resident_mib()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_a_large_build_hands_back_the_free_pages_its_heap_holds_between_blocks() -> None:
    def account(mode: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", FREE_PAGES_ACCOUNT, mode], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout)

    small, large = account("small"), account("large")
    # at the limit the process keeps what it freed; above it, the 128 MiB freed between live blocks leave the process
    assert small["trimmed"] is False and small["released_mib"] < 32
    assert large["trimmed"] is True and large["released_mib"] > 96
