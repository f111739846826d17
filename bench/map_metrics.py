"""The map's metrics in one thread and in two: what the build's map thread gains from sharing the trustworthiness.

``python -m bench.map_metrics --cache caches/all-venues [--threads 1 2] [--repeat 2]`` reads a build's embeddings,
map (documents' x, y) and reference columns, finds the neighbour lists as the build does (through the layout store,
so a second run reads them), and times pipeline.quality.map_metrics.map_metrics as the build calls it
(pipeline.quality.build_metrics.cached_map_metrics, without the store; every library pool limited to one thread, as
the command line limits it) once per thread count and repeat, in turn: wall
seconds, this process's CPU seconds (user + sys, every thread) and whether the figures equal the first run's. The
build passes MAP_METRICS_THREADS (2): the main thread waits for the map thread at the end, so a second core is free.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from pipeline.runtime.parquet import read_frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a build's cache folder (embeddings, documents)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts, timed in turn")
    parser.add_argument("--repeat", type=int, default=2, help="rounds over the thread counts")
    parser.add_argument("--store", type=Path, default=Path(".cache/layouts"), help="the layout store (neighbours)")
    args = parser.parse_args(argv)
    from pipeline.runtime.threads import limit_threads, limit_threads_of_this_process

    limit_threads_of_this_process()  # one thread per library pool, as the build's command line: before numpy loads
    import numpy as np

    from bench.umap_epochs import build_neighbours
    from pipeline.quality.agreement import agreement_references, reference_column
    from pipeline.quality.map_metrics import map_metrics

    limit_threads()
    embeddings = np.ascontiguousarray(np.load(args.cache / "embeddings.npy"), dtype=np.float32)
    documents = read_frame(args.cache / "documents.parquet")
    coordinates = documents[["x", "y"]].to_numpy(dtype=np.float32)
    column = reference_column(documents)
    reference = documents[column].tolist() if column else None
    knn = build_neighbours(embeddings, args.store)
    print(f"{args.cache}: {len(embeddings):,} documents; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print("| round | threads | wall s | CPU s | figures as the first run's |\n|---|---|---|---|---|", flush=True)
    first = None
    for round_number in range(1, args.repeat + 1):
        for threads in args.threads:
            wall, cpu = time.perf_counter(), time.process_time()
            figures = map_metrics(
                embeddings,
                coordinates,
                reference,
                knn_indices=knn.indices,
                references=agreement_references(documents),
                threads=threads,
            )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            first = figures if first is None else first
            print(f"| {round_number} | {threads} | {wall:.1f} | {cpu:.1f} | {figures == first} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
