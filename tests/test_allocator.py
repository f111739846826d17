"""pipeline.runtime.allocator: after keep_freed_memory, a freed large array's pages serve the next one.

Each case runs in a fresh Python process (the setting lasts for the process) that allocates, fills and frees a
256 MiB array six times and counts the page faults of the last five (``resource.getrusage``). Served by fresh
``mmap`` calls, each array faults its pages in again: 65,536 faults of 4 KiB pages, or 128 of 2 MiB huge pages where
the kernel gives them. Kept in the heap, the later arrays reuse the first one's pages and fault almost none.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

FAULTS_OF_REALLOCATIONS = """
import resource, sys
import numpy as np
from pipeline.runtime.allocator import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else None
np.ones(1 << 25).sum()  # 256 MiB of float64, touched; freed at once
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    np.ones(1 << 25).sum()
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def reallocation_faults(mode: str) -> tuple[str, int]:
    """(what keep_freed_memory returned or 'None' when not called, minor page faults of five 256 MiB arrays)."""
    done = subprocess.run(
        [sys.executable, "-c", FAULTS_OF_REALLOCATIONS, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    kept, faults = done.stdout.split()
    return kept, int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_freed_arrays_are_reused_after_keep_freed_memory_and_faulted_again_without() -> None:
    kept, faults_kept = reallocation_faults("keep")
    control, faults_default = reallocation_faults("default")
    assert kept == "True"
    assert control == "None"
    # without: at least 5 x 128 huge-page faults (5 x 65,536 with 4 KiB pages); with: the first array's pages again
    assert faults_default >= 5 * 128
    assert faults_kept < 100, (faults_kept, faults_default)
