"""Compile the build's numba kernels at install time: ``python -m topic_atlas.precompile`` (``make setup`` runs it).

UMAP's and pynndescent's kernels are compiled by numba the first time a process calls them, and kept on disk in
``NUMBA_CACHE_DIR`` (the Makefile sets ``.cache/numba``; pipeline.adapters re-jits UMAP's own kernels with
``cache=True``: docs/decisions/umap-kernels.md). A fresh machine's first build pays that compilation; this command
pays it during setup instead, by building the packaged 19-abstract sample (pipeline.resources) into a temporary
folder that is removed afterwards, with no embedding store (nothing else is kept). The sample reaches the same
kernels with the same argument types as a real corpus: after it, a cold build of ICLR 2025 (11,660 papers) found all
93 of the cache's entries and took 55 CPU s, against 73 CPU s on an empty numba cache and 57 CPU s after a full
build had filled it (2026-12-05, the 2-core Intel Xeon under load 4-6: docs/benchmarks.md).

Prints one line: what was compiled, in how many seconds, and where it is kept. Exits 0 even when the sample cannot
be built (it says why in one line): a build compiles what it needs anyway.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path


def precompile() -> str:
    """Build the packaged sample into a temporary folder with no embedding store; the line to print. Raises what
    pipeline.operations.build.run_build raises."""
    from pipeline.operations.build import run_build
    from pipeline.runtime.paths import SAMPLE_CORPUS, package_file

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="topic-atlas-precompile-") as scratch:
        run_build(package_file(*SAMPLE_CORPUS), Path(scratch) / "atlas", embedding_store=None)
    where = os.environ.get("NUMBA_CACHE_DIR") or "numba's default cache folder"
    return f"compiled the build's kernels in {time.perf_counter() - started:.1f} s (kept in {where})"


def main() -> None:
    """The command: print :func:`precompile`'s line, or one line saying why it could not run; always exit 0."""
    from pipeline.runtime.console import configure_output

    configure_output("precompile")  # libraries' warnings and bars to the log file, as the command line does
    logging.getLogger("pipeline").setLevel(logging.ERROR)  # the sample's stages and notes ("adapted to a small corpus")
    try:
        print(precompile())
    except Exception as error:  # a setup step: the first build compiles what this could not
        print(f"precompile skipped: {type(error).__name__}: {error}", file=sys.stderr)


if __name__ == "__main__":
    main()
