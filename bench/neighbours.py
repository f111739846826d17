"""The neighbour search above 20,000 documents: recall against the exact search, and its cost.

``python -m bench.neighbours --cache caches/all-venues`` reads the embeddings a build wrote (float32, n x dim, unit
rows) and finds each row's ``--k`` nearest rows (itself included, as the build asks: k = 16) by:

- the exact search (pipeline.geometry.neighbors.cosine_knn), the truth the others are scored against;
- pynndescent's NNDescent as the build ran it until 2026-12-03 (euclidean on the unit rows, seed 42, one thread,
  low memory); its first call in a process compiles its numba kernels, as it did in every build (about 25 CPU
  seconds: ``--no-nndescent`` leaves it out, for a quick run such as the test suite's smoke run);
- faiss HNSW graphs (IndexHNSWFlat, inner product; built with one thread, searched with ``--threads``) for a grid of
  links per node (M), efConstruction and efSearch;
- faiss IVF-Flat (a k-means coarse quantiser of ``nlist`` cells, ``nprobe`` cells searched), for comparison;
  ``--ivf NLIST:NPROBE [...]`` sets its grid (default 256:16 512:32; k-means needs at least NLIST rows, so a small
  atlas, as in the test suite's smoke run, needs a smaller grid).

Each line: CPU seconds of this process (user + sys, every thread), wall seconds, and recall@(k-1): the share of
the exact search's k-1 neighbours (the row itself left out) that the search found. The build's default
(pipeline.geometry.neighbors HNSW_LINKS, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH) is chosen from this table.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

Search = Callable[[np.ndarray, int], np.ndarray]
IVF_GRID = ["256:16", "512:32"]  # nlist:nprobe of the IVF-Flat rows


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    """Share of ``exact``'s neighbours (n x k int, column 0 the row itself, left out) present in ``found``'s row."""
    hits = sum(len(set(a) & set(b)) for a, b in zip(found[:, 1:].tolist(), exact[:, 1:].tolist()))
    return hits / max(exact[:, 1:].size, 1)


def timed(search: Search, embeddings: np.ndarray, k: int) -> tuple[np.ndarray, float, float]:
    """(neighbour indices n x k, CPU s, wall s) of one search."""
    cpu, wall = time.process_time(), time.perf_counter()
    found = search(embeddings, k)
    return found, time.process_time() - cpu, time.perf_counter() - wall


def nndescent(embeddings: np.ndarray, k: int) -> np.ndarray:
    """pynndescent's neighbour graph, as the build searched above 20,000 documents until 2026-12-03."""
    from pynndescent import NNDescent

    index = NNDescent(embeddings, n_neighbors=k, metric="euclidean", random_state=42, n_jobs=1, low_memory=True)
    return index.neighbor_graph[0]


def hnsw(links: int, construction: int, search: int, threads: int) -> Search:
    """A faiss HNSW search with these settings (graph built with one thread)."""

    def run(embeddings: np.ndarray, k: int) -> np.ndarray:
        import faiss

        index = faiss.IndexHNSWFlat(embeddings.shape[1], links, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction, index.hnsw.efSearch = construction, search
        faiss.omp_set_num_threads(1)
        index.add(embeddings)
        faiss.omp_set_num_threads(threads)
        return index.search(embeddings, k)[1]

    return run


def ivf(cells: int, probes: int, threads: int) -> Search:
    """A faiss IVF-Flat search (k-means cells seeded 42, trained on at most 64 rows per cell)."""

    def run(embeddings: np.ndarray, k: int) -> np.ndarray:
        import faiss

        faiss.omp_set_num_threads(threads)
        index = faiss.IndexIVFFlat(
            faiss.IndexFlatIP(embeddings.shape[1]), embeddings.shape[1], cells, faiss.METRIC_INNER_PRODUCT
        )
        index.cp.seed, index.cp.max_points_per_centroid, index.cp.niter = 42, 64, 10
        index.train(embeddings)
        index.add(embeddings)
        index.nprobe = probes
        return index.search(embeddings, k)[1]

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a cache folder (its embeddings.npy)")
    parser.add_argument("--k", type=int, default=16, help="neighbours per row, the row itself included (default 16)")
    parser.add_argument("--threads", type=int, default=1, help="faiss search threads (default 1, as the build)")
    parser.add_argument("--no-nndescent", action="store_true", help="leave out pynndescent (its compile)")
    parser.add_argument(
        "--ivf",
        nargs="+",
        default=IVF_GRID,
        metavar="NLIST:NPROBE",
        help=f"IVF-Flat grid (default {' '.join(IVF_GRID)})",
    )
    args = parser.parse_args(argv)
    from pipeline.geometry.neighbors import cosine_knn

    embeddings = np.ascontiguousarray(np.load(args.cache / "embeddings.npy"), dtype=np.float32)
    print(
        f"{args.cache}: {embeddings.shape[0]:,} x {embeddings.shape[1]} embeddings, k = {args.k}; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    exact, cpu, wall = timed(lambda e, k: cosine_knn(e, k)[0], embeddings, args.k)
    print(f"| search | CPU s | wall s | recall@{args.k - 1} |\n|---|---|---|---|", flush=True)
    print(f"| exact (blocked matrix products) | {cpu:.1f} | {wall:.1f} | 1.000 |", flush=True)
    searches: list[tuple[str, Search]] = (
        [] if args.no_nndescent else [("pynndescent NNDescent (compile included)", nndescent)]
    )
    searches += [
        (f"faiss HNSW M={m} efConstruction={c} efSearch={s}", hnsw(m, c, s, args.threads))
        for m, c, s in [(12, 32, 32), (16, 40, 32), (16, 40, 48), (16, 40, 64), (32, 40, 48)]
    ]
    grid = [tuple(int(value) for value in cell.split(":")) for cell in args.ivf]
    searches += [(f"faiss IVF-Flat nlist={c} nprobe={p}", ivf(c, p, args.threads)) for c, p in grid]
    for name, search in searches:
        found, cpu, wall = timed(search, embeddings, args.k)
        print(f"| {name} | {cpu:.1f} | {wall:.1f} | {recall(found, exact):.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
