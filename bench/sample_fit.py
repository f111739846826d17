"""Fit on a sample, place the rest (pipeline.geometry.landmarks) against a full fit of the same papers.

    .venv/bin/python -m bench.sample_fit --input FILE [--subsample 50000] --sizes 0 8600 20000 [--work DIR]
        [--map-epochs 60 80 100] [--store DIR]

Draws ``--subsample`` papers of FILE at random (seed 0; all of them when omitted), then builds them once per
``--sizes`` value as ``topic-atlas build --fit-sample-size S`` (0 = the full fit, every document in UMAP and
HDBSCAN) into ``--work``, each a child process timed from start to exit (CPU seconds and peak RSS from
``os.wait4``). The builds share one embedding and layout store, so the first pays for cleaning, the representation
and the neighbour lists and the later ones reuse them: the wall times compare the stages that differ (their seconds
are printed). For each build it prints the topics, the outliers, the map's trustworthiness and neighbour recall (the
build's own figures, pipeline.quality.evaluation), the kNN accuracy on ``venue`` in the representation and on the map
(k=10, 5-fold, pipeline.quality.neighbour_metrics.knn_accuracy, on at most 20,000 papers), NPMI and topic diversity,
and the topics' agreement with the full fit's (scikit-learn's adjusted mutual information, outliers a label of their
own). ``--map-epochs`` builds each sampled size once per value of ``--fit-sample-map-epochs`` (UMAP's epochs over
every document from the placed map); ``--store`` starts from a copy of another run's store (its ``layouts`` folder and
embedding file), so that only what those values change is computed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.runtime.parquet import read_frame

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("landmark_neighbours", "umap_cluster_space", "hdbscan", "place_clusters", "map_2d", "map_place_refine")
ACCURACY_SAMPLE = 20_000


def timed_build(
    input_path: Path, cache_dir: Path, size: int, store: Path, map_epochs: int | None = None
) -> dict[str, Any]:
    """One ``topic-atlas build`` child (``map_epochs``: its ``--fit-sample-map-epochs``, None for the default):
    {wall_s, cpu_s, peak_rss_mb, manifest}. Raises RuntimeError when it fails."""
    env = dict(os.environ, ATLAS_EMBEDDING_CACHE=str(store), HF_HUB_OFFLINE="1")
    command = [str(ROOT / ".venv" / "bin" / "topic-atlas"), "build", "--input", str(input_path)]
    command += ["--cache", str(cache_dir), "--fit-sample-size", str(size), "--force", "--no-align"]
    command += [] if map_epochs is None else ["--fit-sample-map-epochs", str(map_epochs)]
    start = time.perf_counter()
    with open(cache_dir.parent / f"{cache_dir.name}.log", "w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise RuntimeError(f"build with --fit-sample-size {size} failed: see {cache_dir}.log")
    manifest = json.loads((cache_dir / "manifest.json").read_text())
    return {
        "wall_s": time.perf_counter() - start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "manifest": manifest,
    }


def venue_accuracy(cache_dir: Path) -> tuple[float | None, float | None]:
    """kNN accuracy on ``venue`` (embedding, map) over a seeded sample of at most ACCURACY_SAMPLE papers."""
    from pipeline.quality.neighbour_metrics import knn_accuracy

    documents = read_frame(cache_dir / "documents.parquet")
    if "venue" not in documents or documents["venue"].nunique() < 2:
        return None, None  # a corpus without venues
    embeddings = np.load(cache_dir / "embeddings.npy", mmap_mode="r")
    rows = np.sort(np.random.default_rng(0).permutation(len(documents))[:ACCURACY_SAMPLE])
    venues = documents["venue"].astype(str).to_numpy()[rows]
    common = pd.Series(venues).value_counts()
    keep = np.isin(venues, common[common >= 10].index)  # a venue of fewer than 10 papers cannot be cross-validated
    rows, venues = rows[keep], venues[keep]
    in_space = knn_accuracy(np.asarray(embeddings[rows]), venues.tolist(), metric="cosine", folds=5)
    on_map = knn_accuracy(documents[["x", "y"]].to_numpy()[rows], venues.tolist(), metric="euclidean", folds=5)
    return in_space, on_map


def topic_agreement(reference: Path, other: Path) -> float:
    """Adjusted mutual information between two builds' topics of the same papers (by doc_id)."""
    from sklearn.metrics import adjusted_mutual_info_score

    first = read_frame(reference / "documents.parquet", columns=["doc_id", "topic"]).set_index("doc_id")
    second = read_frame(other / "documents.parquet", columns=["doc_id", "topic"]).set_index("doc_id")
    both = first.index.intersection(second.index)
    return float(adjusted_mutual_info_score(first.loc[both, "topic"], second.loc[both, "topic"]))


def subsample(input_path: Path, size: int | None, work: Path) -> Path:
    """``size`` random rows of the Parquet file ``input_path`` (seed 0) as a Parquet file in ``work``; the file
    itself when None."""
    if size is None:
        return input_path
    frame = read_frame(input_path)
    path = work / f"subsample_{size}.parquet"
    frame.sample(n=min(size, len(frame)), random_state=0).to_parquet(path, index=False)
    return path


def row(size: int, result: dict[str, Any], cache_dir: Path, reference: Path, map_epochs: int | None = None) -> str:
    """One table row of a build (see the module docstring)."""
    manifest, metrics = result["manifest"], result["manifest"]["metrics"]
    in_space, on_map = venue_accuracy(cache_dir)
    stages = ", ".join(
        f"{stage} {manifest['timings_s'][stage]:.0f}" for stage in STAGES if stage in manifest["timings_s"]
    )
    ami = topic_agreement(reference, cache_dir)
    cells = [
        "full fit" if size == 0 else f"{size:,}",
        "-" if size == 0 else str(map_epochs or manifest["params"].get("fit_sample_map_epochs", "-")),
        f"{result['wall_s']:.0f} s",
        f"{result['cpu_s']:.0f} s",
        f"{result['peak_rss_mb']:,.0f} MiB",
        str(manifest["n_topics"]),
        f"{manifest['outlier_fraction']:.3f}",
        f"{metrics['trustworthiness_2d']:.3f}",
        f"{metrics['knn_recall_2d']:.3f}",
        "-" if in_space is None else f"{in_space:.3f}",
        "-" if on_map is None else f"{on_map:.3f}",
        f"{metrics['npmi']:.3f}",
        f"{metrics['topic_diversity']:.3f}",
        f"{ami:.3f}",
        stages,
    ]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--subsample", type=int, default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 8_600, 20_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/sample_fit"))
    parser.add_argument("--map-epochs", type=int, nargs="+", default=None)
    parser.add_argument("--store", type=Path, default=None, help="a store folder to start from (copied)")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = subsample(args.input, args.subsample, args.work)
    store = args.work / "store" / "embeddings.sqlite"
    if args.store is not None and not store.parent.exists():
        shutil.copytree(args.store, store.parent)
        found = sorted(store.parent.glob("*.sqlite"))
        if found and not store.exists():
            found[0].rename(store)
    store.parent.mkdir(exist_ok=True)
    print(f"{corpus} · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · load {os.getloadavg()[0]:.1f}")
    print(
        "| landmarks | map epochs | wall | CPU | peak RSS | topics | outliers | trustworthiness | kNN recall (map) | "
        "venue kNN acc. (space) | venue kNN acc. (map) | NPMI | diversity | AMI vs full fit | stage seconds |"
    )
    print("|" + "---|" * 15)
    runs = [(size, epochs) for size in args.sizes for epochs in (args.map_epochs if size else None) or [None]]
    reference = None
    for size, epochs in runs:
        cache_dir = args.work / (f"fit-{size}" if epochs is None else f"fit-{size}-e{epochs}")
        result = timed_build(corpus, cache_dir, size, store, epochs)
        reference = reference or cache_dir
        print(row(size, result, cache_dir, reference, epochs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
