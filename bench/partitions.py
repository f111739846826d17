"""The per-document stages on one process against a Dask cluster of worker processes (pipeline.partitions, issue 42).

``python -m bench.partitions --input /tmp/big290/all.parquet --rows 100000 --landmarks 50000 --workers 2`` reads the
first ``--rows`` records of a corpus file and runs each per-document stage twice, in this process (the build's
single-process code) and as Dask tasks over partitions of ``--partition-rows`` rows on a LocalCluster of ``--workers``
processes of one thread each (``--scheduler tcp://host:8786`` uses a running cluster instead), checking that both give
the same result:

- ``clean rows``: each record's drop reason, model text, duplicate key and language (pipeline.partitions.clean);
- ``represent``: the tfidf-svd representation, fitted here on the landmarks' texts (the first ``--landmarks``
  documents of the canonical order), transforming every document (pipeline.partitions.represent);
- ``landmarks``: the landmarks' HNSW graph and their own lists (on the driver in both), each other document's
  ``--k`` nearest landmarks (pipeline.geometry.landmarks.search_landmarks against pipeline.partitions.run);
- ``place``, ``vote``: the other documents' map positions and clusters from their landmarks' (place_rest, vote_rest),
  with the landmarks' layout and labels made from their vectors (the values do not change the cost);
- ``term counts``: every document's c-TF-IDF term counts summed per cluster (pipeline.partitions.terms).

Printed: one row per stage with the single-process wall seconds, the cluster's wall seconds (the driver's share,
scattering the inputs and gathering the results included), each with its CPU seconds (this process; on the cluster
the workers' and this process's together, so the cost of moving partitions shows), the speed-up, the partitions'
own compute seconds (median and max, from dask.distributed's task stream), the rows per second of one partition (a
full partition over the median) and the CPU milliseconds per 1,000 rows both ways; then each worker's peak memory
and the driver's. The workers import the pipeline's modules once before the stages are timed (a long-lived
cluster's workers have), and that start-up is printed on its own. The machine's load average is printed first and
last: wall times on a machine busy with other work are slower and noisier than on an idle one; CPU seconds much
less so.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_INPUT = Path("/tmp/big290/all.parquet")


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    """(function's result, wall seconds)."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def worker_cpu_seconds() -> float:
    """Not a task: run by ``client.run`` on every worker. The calling process's CPU seconds so far (user + system)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def partition_seconds(stream: list[dict[str, Any]], prefix: str) -> list[float]:
    """Compute seconds of each task whose key starts with ``prefix`` (a task function's name), from a task stream."""
    seconds = []
    for task in stream:
        if str(task["key"]).strip("('").startswith(prefix):
            seconds.extend(part["stop"] - part["start"] for part in task["startstops"] if part["action"] == "compute")
    return seconds


def warm_worker() -> None:
    """Not a task: run on every worker before the timings, importing what the stages' tasks and their inputs need."""
    import faiss  # noqa: F401
    import sklearn.feature_extraction.text  # noqa: F401

    import pipeline.ingest.clean  # noqa: F401
    import pipeline.ingest.language
    import pipeline.partitions.place  # noqa: F401
    import pipeline.partitions.search  # noqa: F401
    import pipeline.partitions.terms  # noqa: F401
    import pipeline.represent.representation  # noqa: F401
    import pipeline.text.vocabulary  # noqa: F401

    pipeline.ingest.language.detect_language("warm")  # loads py3langid's model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, default=DEFAULT_INPUT, help="a corpus file (any format the build reads)")
    parser.add_argument("--rows", type=int, default=100_000, help="records read from the start of the file")
    parser.add_argument("--landmarks", type=int, default=50_000, help="the sample (BuildConfig.fit_sample_size)")
    parser.add_argument("--k", type=int, default=15, help="landmarks per document (BuildConfig.umap_n_neighbors)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster")
    parser.add_argument("--scheduler", default=None, help="a running cluster's address instead of a local cluster")
    parser.add_argument("--partition-rows", type=int, default=20_000, help="rows per Dask task")
    arguments = parser.parse_args()

    from distributed import get_task_stream

    from pipeline.geometry.landmarks import Landmarks, membership_weights, place_rest, search_landmarks, vote_rest
    from pipeline.ingest.corpus import load_corpus
    from pipeline.operations.build import canonical_order
    from pipeline.partitions.clean import clean_partition, clean_rows_partitioned, kept_rows
    from pipeline.partitions.cluster import connect, partition_bounds, workers_peak_rss_mb
    from pipeline.partitions.represent import transform_partitioned
    from pipeline.partitions.run import partitioned_landmarks, place_rest_partitioned, vote_rest_partitioned
    from pipeline.partitions.terms import topic_term_counts, topic_term_counts_partitioned
    from pipeline.represent.representation import LEXICAL, LexicalParams, Representation, fit_lexical
    from pipeline.runtime.stages import peak_rss_mb
    from pipeline.text.tokens import tokenize
    from pipeline.text.vocabulary import make_vectorizer
    from pipeline.text.words import STOP_WORDS

    print(f"load average at start: {' '.join(f'{value:.2f}' for value in os.getloadavg())} on {os.cpu_count()} CPUs")
    raw = load_corpus(arguments.input)
    raw = dataclasses.replace(raw, records=raw.records.iloc[: arguments.rows].reset_index(drop=True))
    rows_partition = arguments.partition_rows
    scheduler = arguments.scheduler or f"local:{arguments.workers}"
    table: list[tuple[str, int, float, float, float, float, list[float]]] = []
    with connect(scheduler) as client:
        client.wait_for_workers(1)
        workers = len(client.scheduler_info()["workers"])
        _, warm_s = timed(lambda: client.run(warm_worker))
        print(f"  worker start-up (imports, language model): {warm_s:.1f} s", flush=True)

        def cluster_cpu() -> float:
            return sum(client.run(worker_cpu_seconds).values()) + time.process_time()

        def both(name: str, rows: int, single: Callable[[], Any], parted: Callable[[], Any], prefix: str) -> tuple:
            cpu = time.process_time()
            single_result, single_s = timed(single)
            single_cpu = time.process_time() - cpu
            cpu = cluster_cpu()
            with get_task_stream(client) as stream:
                parted_result, parted_s = timed(parted)
            parted_cpu = cluster_cpu() - cpu
            per_partition = partition_seconds(stream.data, prefix)
            table.append((name, rows, single_s, single_cpu, parted_s, parted_cpu, per_partition))
            print(
                f"  {name}: {single_s:.1f} s ({single_cpu:.1f} CPU s) in one process, "
                f"{parted_s:.1f} s ({parted_cpu:.1f} CPU s) on {workers} workers",
                flush=True,
            )
            return single_result, parted_result

        n_records = len(raw.records)
        cleaned, parted_rows = both(
            "clean rows",
            n_records,
            lambda: clean_partition(raw.records, raw.text_column),
            lambda: clean_rows_partitioned(client, raw.records, raw.text_column, rows_partition),
            "clean_partition",
        )
        assert cleaned.equals(parted_rows), "clean rows differ"
        kept = kept_rows(cleaned)
        texts_in_file_order = cleaned["text"].iloc[kept].tolist()
        texts = [texts_in_file_order[row] for row in canonical_order(texts_in_file_order)]
        n, size = len(texts), min(arguments.landmarks, len(texts) - 1)
        print(f"{n_records:,} records, {n:,} documents, {size:,} landmarks", flush=True)
        model, _ = fit_lexical(texts[:size], LexicalParams())
        representation = Representation(LEXICAL, model, {LEXICAL: model.components.shape[0]})
        embeddings, parted_embeddings = both(
            "represent",
            n,
            lambda: representation.transform(texts),
            lambda: transform_partitioned(client, representation, texts, rows_partition),
            "transform_partition",
        )
        assert np.array_equal(embeddings, parted_embeddings), "representations differ"
        found, parted = both(
            "landmarks",
            n - size,
            lambda: search_landmarks(embeddings, size, arguments.k),
            lambda: partitioned_landmarks(client, embeddings, size, arguments.k, partition_rows=rows_partition),
            "search_partition",
        )
        assert np.array_equal(found["rest_indices"], parted.landmarks.rest_indices), "landmarks differ"
        landmarks = Landmarks(size, parted.landmarks.neighbours, found["rest_indices"], parted.landmarks.rest_weights)
        assert np.array_equal(landmarks.rest_weights, membership_weights(found["rest_similarities"]))
        layout = embeddings[:size, :2].copy()
        classes = min(40, embeddings.shape[1] - 3)  # up to 39 clusters and the outliers
        labels = (np.argmax(embeddings[:size, 2 : 2 + classes], axis=1) - 1).astype(np.int64)
        strengths = np.abs(embeddings[:size, 2 + classes]).astype(np.float32)
        placed, parted_placed = both(
            "place",
            n - size,
            lambda: place_rest(landmarks, layout),
            lambda: place_rest_partitioned(client, parted.parts, layout),
            "place_partition",
        )
        assert np.allclose(placed, parted_placed, rtol=1e-6, atol=1e-7), "positions differ"
        voted, parted_voted = both(
            "vote",
            n - size,
            lambda: vote_rest(landmarks, labels, strengths),
            lambda: vote_rest_partitioned(client, parted.parts, labels, strengths),
            "vote_partition",
        )
        assert np.array_equal(voted[0], parted_voted[0]), "clusters differ"
        assert np.allclose(voted[1], parted_voted[1], rtol=1e-6, atol=1e-7), "strengths differ"
        topics = voted[0]
        vocabulary = make_vectorizer(texts, ngram_max=2, tokens=tokenize(texts)).vocabulary
        topic_ids = sorted(set(topics.tolist()))
        counts, parted_counts = both(
            "term counts",
            n,
            lambda: topic_term_counts(texts, topics, topic_ids, vocabulary, STOP_WORDS, 2),
            lambda: topic_term_counts_partitioned(
                client, texts, topics, topic_ids, vocabulary, STOP_WORDS, 2, rows_partition
            ),
            "count_partition",
        )
        assert (counts.counts != parted_counts.counts).nnz == 0, "term counts differ"
        peaks = workers_peak_rss_mb(client)

    print()
    print(f"{n_records:,} records of {arguments.input.name}; {workers} workers ({scheduler}), {rows_partition:,} rows")
    print("per partition; every stage gave the same result both ways")
    print()
    print(
        "| stage | rows | one process s (CPU s) | cluster s (CPU s) | speed-up | partitions "
        "| partition s (median / max) | rows/s per partition | CPU ms per 1,000 rows (one / cluster) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rows, single_s, single_cpu, parted_s, parted_cpu, per_partition in table:
        median = statistics.median(per_partition) if per_partition else float("nan")
        rate = min(rows_partition, rows) / median if per_partition and median > 0 else float("nan")
        slowest = max(per_partition, default=float("nan"))
        print(
            f"| {name} | {rows:,} | {single_s:.1f} ({single_cpu:.1f}) | {parted_s:.1f} ({parted_cpu:.1f}) | "
            f"{single_s / parted_s:.2f}x | {len(partition_bounds(rows, rows_partition))} | "
            f"{median:.2f} / {slowest:.2f} | {rate:,.0f} | "
            f"{1e6 * single_cpu / rows:,.0f} / {1e6 * parted_cpu / rows:,.0f} |"
        )
    total_single, total_parted = sum(row[2] for row in table), sum(row[4] for row in table)
    cpu_single, cpu_parted = sum(row[3] for row in table), sum(row[5] for row in table)
    print(
        f"| all | | {total_single:.1f} ({cpu_single:.1f}) | {total_parted:.1f} ({cpu_parted:.1f}) | "
        f"{total_single / total_parted:.2f}x | | | | |"
    )
    print()
    for address, peak in sorted(peaks.items()):
        print(f"worker {address}: peak memory {peak:,.0f} MiB")
    print(f"driver: peak memory {peak_rss_mb():,.0f} MiB")
    print(f"load average at end: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
