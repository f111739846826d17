"""How many rows trustworthiness needs above 20,000 documents: a sampled figure's standard error and its cost.

``python -m bench.trust_sample --cache caches/all-venues`` reads a build's embeddings and map (documents' x, y),
ranks the build's seeded sample of 20,000 rows (pipeline.quality.map_metrics.evaluation_sample) against every document
(pipeline.quality.neighbour_metrics.trustworthiness_penalties: the same figure the build computes, per row), and prints
for each sample size the estimate, its standard error (the per-row figures' standard deviation over the square root of
the rows) and the spread of 200 seeded subsamples of that size, with the CPU seconds of ranking that many rows. The
build's TRUSTWORTHINESS_SAMPLE is chosen from this table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pipeline.runtime.parquet import read_frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a build's cache folder (embeddings, documents)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 10_000, 5_000, 2_000])
    args = parser.parse_args(argv)
    from pipeline.quality.map_metrics import evaluation_sample
    from pipeline.quality.neighbour_metrics import NEIGHBOURS, map_neighbours, trustworthiness_penalties

    embeddings = np.load(args.cache / "embeddings.npy")
    coordinates = read_frame(args.cache / "documents.parquet", columns=["x", "y"]).to_numpy(np.float32)
    n, k = len(embeddings), NEIGHBOURS
    sample = evaluation_sample(n, max(args.sizes))
    rows = np.arange(n) if sample is None else sample
    cpu = time.process_time()
    penalties = trustworthiness_penalties(embeddings, map_neighbours(coordinates, k), rows=rows)
    cpu_per_row = (time.process_time() - cpu) / len(rows)
    per_row = 1.0 - penalties * 2.0 / (k * (2.0 * n - 3.0 * k - 1.0))
    print(f"{args.cache}: {n:,} documents, k = {k}; {len(rows):,} rows ranked against all\n")
    print("| rows | trustworthiness | standard error | 200 subsamples: sd, min-max | CPU s |\n|---|---|---|---|---|")
    generator = np.random.default_rng(1)
    for size in sorted({min(size, len(rows)) for size in args.sizes}, reverse=True):
        means = [per_row[generator.choice(len(rows), size, replace=False)].mean() for _ in range(200)]
        spread = f"{np.std(means):.4f}, {min(means):.4f}-{max(means):.4f}" if size < len(rows) else "(all rows)"
        print(
            f"| {size:,} | {per_row[:size].mean() if size == len(rows) else np.mean(means):.4f} | "
            f"{per_row.std() / np.sqrt(size):.4f} | {spread} | {cpu_per_row * size:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
