"""UMAP's epochs above 20,000 documents: what fewer SGD epochs cost the map and the clusters, and what they save.

``python -m bench.umap_epochs --cache caches/all-venues [--epochs 200 150 100]`` reads a build's embeddings and
documents (float32 n x dim), finds the neighbour lists as the build does (pipeline.geometry.neighbors, through the
layout store, so a second run reads them), then for each epoch count fits, one after the other and seeded as the
build fits them (pipeline.geometry.umap_layout.umap_layout):

- the clustering space (5D, ``negative_sample_rate`` 5), clustered by HDBSCAN with the build's parameters for n
  (BuildConfig.resolved_for): clusters, outlier share, and AMI and ARI against the first epoch count's clusters
  (the reference: UMAP's default of 200 epochs above 10,000 documents, the build's seed); ``--seeds`` fits each
  epoch count with the build's seed and the next ones, so the spread a seed alone makes is beside each change;
- the map (2D, ``negative_sample_rate`` 15): trustworthiness (k = 10, on the build's seeded sample of 20,000 rows
  ranked against all n), kNN recall and the kNN accuracy of the primary area on the map
  (pipeline.quality.neighbour_metrics).

Each fit's CPU seconds are this process's (user + sys; UMAP's seeded SGD runs on one thread). The build keeps
UMAP's default epochs; docs/decisions/map-umap-settings.md holds the table and why.

``--map-negative-rates 15 10 5`` fits only the map instead, at UMAP's default epochs, once per
``negative_sample_rate`` and seed (the first rate is the build's; each negative sample costs the SGD about as much
as a positive one, so the rate sets most of the map's fit time): its CPU seconds and the same three map figures.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from pipeline.runtime.parquet import read_frame


def timed_fit(
    embeddings: np.ndarray, knn, components: int, negative_rate: int, epochs: int | None, seed_offset: int = 0
) -> tuple[np.ndarray, float]:
    """(layout float32 n x components, CPU s) of one seeded UMAP fit as the build runs it (its seed plus
    ``seed_offset``)."""
    from pipeline.config import BuildConfig
    from pipeline.geometry.umap_layout import umap_layout

    config = BuildConfig()
    cpu = time.process_time()
    layout = umap_layout(
        embeddings,
        knn.indices,
        knn.similarities,
        components,
        config.umap_n_neighbors,
        config.umap_min_dist,
        config.random_state + seed_offset,
        negative_rate,
        n_epochs=epochs,
    )
    return layout, time.process_time() - cpu


def map_figures(embeddings: np.ndarray, coordinates: np.ndarray, knn, areas: list) -> dict[str, float]:
    """Trustworthiness, kNN recall and the primary area's kNN accuracy of a map, as the build measures them."""
    from pipeline.quality import neighbour_metrics
    from pipeline.quality.map_metrics import evaluation_sample

    sample = evaluation_sample(len(embeddings))
    rows = np.arange(len(embeddings)) if sample is None else sample
    k = neighbour_metrics.NEIGHBOURS
    map_knn = neighbour_metrics.map_neighbours(coordinates, k)
    embedding_knn = neighbour_metrics.drop_self(knn.indices, k)
    return {
        "trustworthiness": neighbour_metrics.trustworthiness(embeddings, coordinates, k, map_knn=map_knn, rows=sample),
        "recall": neighbour_metrics.knn_recall(
            embeddings[rows], coordinates[rows], k, embedding_knn[rows], map_knn[rows]
        ),
        "area accuracy": neighbour_metrics.knn_accuracy(
            coordinates[rows], [areas[i] for i in rows.tolist()], "euclidean", k
        ),
    }


def measured_row(
    embeddings: np.ndarray, knn, areas: list, config, epochs: int, seed_offset: int, reference: np.ndarray | None
) -> tuple[np.ndarray, list[str]]:
    """Both fits at ``epochs`` (seed + ``seed_offset``): (the clusters, the table's cells after the first)."""
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

    from pipeline.geometry.cluster import hdbscan_clusters

    space, space_cpu = timed_fit(embeddings, knn, config.umap_n_components, 5, epochs, seed_offset)
    labels, _ = hdbscan_clusters(
        space, config.min_cluster_size, config.min_samples, config.cluster_selection_method, config.max_cluster_share
    )
    reference = labels if reference is None else reference
    coordinates, map_cpu = timed_fit(embeddings, knn, 2, config.map_negative_sample_rate, epochs, seed_offset)
    figures = map_figures(embeddings, coordinates, knn, areas)
    return labels, [
        f"{space_cpu:.1f}",
        f"{labels.max() + 1}",
        f"{np.mean(labels < 0):.3f}",
        f"{adjusted_mutual_info_score(reference, labels):.3f}",
        f"{adjusted_rand_score(reference, labels):.3f}",
        f"{map_cpu:.1f}",
        f"{figures['trustworthiness']:.4f}",
        f"{figures['recall']:.4f}",
        f"{figures['area accuracy']:.4f}",
    ]


def negative_rate_row(embeddings: np.ndarray, knn, areas: list, rate: int, seed_offset: int) -> list[str]:
    """The map alone at UMAP's default epochs with ``negative_sample_rate`` ``rate`` (seed + ``seed_offset``): the
    table's cells after the first (fit CPU s, trustworthiness, kNN recall, area kNN accuracy)."""
    coordinates, map_cpu = timed_fit(embeddings, knn, 2, rate, None, seed_offset)
    figures = map_figures(embeddings, coordinates, knn, areas)
    return [f"{map_cpu:.1f}"] + [f"{figures[name]:.4f}" for name in ("trustworthiness", "recall", "area accuracy")]


def build_neighbours(embeddings: np.ndarray, store: Path):
    """The neighbour lists a build of ``embeddings`` (float32, n x dim) finds (pipeline.geometry.neighbors
    .cached_cosine_knn, as many per row as the build asks for), through the layout store folder ``store``: a second
    run reads them."""
    from pipeline.config import BuildConfig
    from pipeline.geometry.neighbors import cached_cosine_knn
    from pipeline.store.keys import fingerprint
    from pipeline.store.layouts import LayoutStore

    config = BuildConfig().resolved_for(len(embeddings))
    wanted = max(config.umap_n_neighbors, config.n_neighbors_similar + 1)
    return cached_cosine_knn(embeddings, wanted, LayoutStore(store), fingerprint(embeddings))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a build's cache folder (embeddings, documents)")
    parser.add_argument("--epochs", type=int, nargs="+", default=[200, 150, 100], help="the first is the reference")
    parser.add_argument(
        "--seeds", type=int, default=2, help="seeds per epoch count (the build's, then the next ones): the spread"
    )
    parser.add_argument("--store", type=Path, default=Path(".cache/layouts"), help="the layout store (neighbours)")
    parser.add_argument(
        "--map-negative-rates", type=int, nargs="+", help="fit only the map, once per negative_sample_rate (and seed)"
    )
    args = parser.parse_args(argv)
    from pipeline.config import BuildConfig

    embeddings = np.ascontiguousarray(np.load(args.cache / "embeddings.npy"), dtype=np.float32)
    areas = read_frame(args.cache / "documents.parquet", columns=["primary_area"])["primary_area"].tolist()
    config = BuildConfig().resolved_for(len(embeddings))
    knn = build_neighbours(embeddings, args.store)
    print(
        f"{args.cache}: {len(embeddings):,} documents; HDBSCAN min_cluster_size {config.min_cluster_size}, "
        f"min_samples {config.min_samples}; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if args.map_negative_rates:
        print("| map negative_sample_rate | 2D fit CPU s | trustworthiness | kNN recall | area kNN accuracy (map) |")
        print("|---|---|---|---|---|", flush=True)
        for rate in args.map_negative_rates:
            for offset in range(args.seeds):
                cells = negative_rate_row(embeddings, knn, areas, rate, offset)
                print(f"| {rate}{f' (seed +{offset})' if offset else ''} | " + " | ".join(cells) + " |", flush=True)
        return 0
    print(
        "| epochs | 5D fit CPU s | clusters | outliers | AMI vs first | ARI vs first | 2D fit CPU s | "
        "trustworthiness | kNN recall | area kNN accuracy (map) |\n|---|---|---|---|---|---|---|---|---|---|",
        flush=True,
    )
    reference = None
    for epochs in args.epochs:
        for offset in range(args.seeds):
            labels, cells = measured_row(embeddings, knn, areas, config, epochs, offset, reference)
            reference = labels if reference is None else reference
            print(f"| {epochs}{f' (seed +{offset})' if offset else ''} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
