"""The map metrics as the build and ``topic-atlas evaluate`` report them: the figures that depend on the embeddings,
the 2D map and the reference columns but not on the topics (trustworthiness_2d, knn_recall_2d and the kNN accuracies;
their definitions in pipeline.quality.neighbour_metrics), on a seeded sample of a large corpus, their slow parts
shared by a few threads.

The build caches them with the layouts (pipeline.quality.build_metrics): a rebuild that changes only clustering or
topic parameters reuses them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from pipeline.quality.agreement import has_reference
from pipeline.quality.fold_knn import (
    FoldLabels,
    FoldVotes,
    distance_block_tasks,
    fold_labels,
    record_low_dimensional,
)
from pipeline.quality.neighbour_metrics import (
    CV_FOLDS,
    LEAST_POPULATED_CLASS,
    NEIGHBOURS,
    PenaltyBlocks,
    drop_self,
    embedding_neighbours,
    knn_recall,
    map_neighbours,
    penalties_trustworthiness,
)
from pipeline.runtime.tasks import run_tasks

# Above this many documents the map and kNN metrics are computed on a seeded random sample of this many documents
# (kNN recall: sampled rows against every document; kNN accuracy: cross-validated within the sample; trustworthiness:
# TRUSTWORTHINESS_SAMPLE rows), so evaluation stays linear in n. The whole conference (11,672) is evaluated in full.
EVALUATION_SAMPLE = 20_000
# Above EVALUATION_SAMPLE documents trustworthiness ranks a seeded sample of this many rows against every document:
# its cost is rows x n x dim, and on the six collections (49,805) the sample's standard error is 0.0005 at 10,000
# rows against 0.0003 at 20,000 (bench/trust_sample.py).
TRUSTWORTHINESS_SAMPLE = 10_000
# Trustworthiness ranks its rows in blocks of at most 512 rows x n documents (PenaltyBlocks), one block per thread at
# a time, each about 9 bytes per element while it is counted (the float32 product, 1 - it, a boolean mask); above
# 32,768 documents the block has fewer rows, so that a block stays within this many elements (about 150 MB): 512 rows
# of the 285,717 documents of issue 42 were 1.3 GB per thread, and the two threads' blocks met the topics' stages
# when the map was done before them (a build's peak). The rows' penalties do not depend on the blocks.
PENALTY_BLOCK_ELEMENTS = 1 << 24
PENALTY_BLOCK_MAX_ROWS = 512


def map_metrics(
    embeddings: np.ndarray | None,
    coordinates: np.ndarray | None,
    reference: Sequence[Any] | None = None,
    k: int = NEIGHBOURS,
    knn_indices: np.ndarray | None = None,
    references: Mapping[str, Sequence[Any]] | None = None,
    threads: int = 1,
) -> dict[str, float | None]:
    """The metrics that depend only on the embeddings, the map and the reference columns, not on the topics:
    trustworthiness_2d, knn_recall_2d, knn_accuracy_embedding, knn_accuracy_2d (of ``reference``), and for each of
    ``references`` ``"<column>:knn_accuracy_embedding"`` and ``"<column>:knn_accuracy_2d"`` (None where they cannot
    be computed).

    They are most of the evaluation's time, so the build caches them with the layouts: a rebuild that changes only
    clustering or topic parameters reuses them. The embedding-space kNN accuracies of every column are predicted from
    the trustworthiness's own distance blocks (pipeline.quality.fold_knn) when every row is evaluated, else from blocks
    of the sample; the map's from one KD-tree. ``threads`` > 1 runs the blocks, nearly all of the time, in that many
    threads (pipeline.runtime.tasks.run_tasks): the same figures, sooner when a core is free (the build's map thread
    passes 2: the main thread waits for it at the end). Raises ValueError when ``threads`` < 1.
    """
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    n = 0 if embeddings is None else len(embeddings)
    figures: dict[str, float | None] = {"trustworthiness_2d": None, "knn_recall_2d": None}
    sample = evaluation_sample(n, EVALUATION_SAMPLE)
    chosen = np.arange(n) if sample is None else sample
    with warnings.catch_warnings():  # here, not in the threads: catch_warnings changes the whole process's filters
        warnings.filterwarnings("ignore", message=LEAST_POPULATED_CLASS)
        accuracy_keys, columns = reference_columns({"": reference, **(references or {})}, chosen, k)
    embedding_votes = FoldVotes(columns, k) if columns and embeddings is not None else None
    tasks: list[Callable[[], Any]] = []
    blocks = None
    if embeddings is not None and coordinates is not None and k < n / 2:
        map_knn = map_neighbours(coordinates, k)
        shared = embedding_votes if sample is None else None
        blocks = PenaltyBlocks(embeddings, map_knn, trustworthiness_sample(n), penalty_block_rows(n), votes=shared)
        tasks += blocks.tasks()
        if knn_indices is not None and knn_indices.shape[1] > k:
            embedding_knn = drop_self(knn_indices, k)
        else:
            embedding_knn = embedding_neighbours(embeddings, k)
        figures["knn_recall_2d"] = knn_recall(
            embeddings[chosen], coordinates[chosen], k, embedding_knn=embedding_knn[chosen], map_knn=map_knn[chosen]
        )
    if embedding_votes is not None and (blocks is None or blocks.votes is None):
        sampled = np.asarray(embeddings)[chosen]
        tasks += distance_block_tasks(embedding_votes, sampled, "cosine", penalty_block_rows(len(chosen)))
    map_votes = FoldVotes(columns, k) if columns and coordinates is not None else None
    if map_votes is not None:
        points = np.asarray(coordinates)[chosen]
        tasks.append(partial(record_low_dimensional, map_votes, points, np.arange(len(chosen))))
    run_tasks(tasks, threads)
    accuracies = {
        space: votes.accuracies() if votes is not None else None
        for space, votes in (("embedding", embedding_votes), ("2d", map_votes))
    }
    for key, index in accuracy_keys.items():
        space_accuracies = accuracies["embedding" if key.endswith("_embedding") else "2d"]
        figures[key] = None if index is None or space_accuracies is None else space_accuracies[index]
    if blocks is not None:
        figures["trustworthiness_2d"] = penalties_trustworthiness(blocks.penalties, n, k)
    return figures


def reference_columns(
    columns: Mapping[str, Sequence[Any] | None], chosen: np.ndarray, k: int = NEIGHBOURS
) -> tuple[dict[str, int | None], list[FoldLabels]]:
    """The kNN accuracies of :func:`map_metrics` as columns to predict: ({figure key: index of its column in the
    list, or None for a figure that cannot be computed}, the columns' pipeline.quality.fold_knn.FoldLabels over the
    rows ``chosen``, CV_FOLDS folds, seed 0).

    ``columns``: name -> values (n); the name "" gives the keys knn_accuracy_embedding and knn_accuracy_2d, any other
    ``"<name>:knn_accuracy_embedding"`` and ``"<name>:knn_accuracy_2d"``. A column without two distinct values gets no
    ``<name>:`` keys (and "" None figures); a column with the values of one listed before shares its entry. Call it
    under a warnings filter for LEAST_POPULATED_CLASS.
    """
    keys: dict[str, int | None] = {}
    labels: list[FoldLabels] = []
    seen: dict[tuple[str, ...], int | None] = {}
    for name, values in columns.items():
        prefix = f"{name}:" if name else ""
        if not has_reference(values):
            if not name:
                keys |= {"knn_accuracy_embedding": None, "knn_accuracy_2d": None}
            continue
        signature = tuple("" if value is None else str(value) for value in values)
        if signature not in seen:
            column = fold_labels([values[i] for i in chosen.tolist()], CV_FOLDS, 0, k)
            seen[signature] = None if column is None else len(labels)
            if column is not None:
                labels.append(column)
        keys |= {f"{prefix}knn_accuracy_{space}": seen[signature] for space in ("embedding", "2d")}
    return keys, labels


def penalty_block_rows(n: int) -> int:
    """Rows per trustworthiness block over ``n`` documents: PENALTY_BLOCK_MAX_ROWS up to 32,768 documents, then
    PENALTY_BLOCK_ELEMENTS // n (at least 16)."""
    return min(PENALTY_BLOCK_MAX_ROWS, max(16, PENALTY_BLOCK_ELEMENTS // max(n, 1)))


def trustworthiness_sample(n: int) -> np.ndarray | None:
    """The rows :func:`map_metrics` ranks for trustworthiness: None (all) up to EVALUATION_SAMPLE documents, else a
    seeded sample of TRUSTWORTHINESS_SAMPLE (:func:`evaluation_sample`)."""
    return None if n <= EVALUATION_SAMPLE else evaluation_sample(n, TRUSTWORTHINESS_SAMPLE)


def evaluation_sample(n: int, size: int = EVALUATION_SAMPLE, seed: int = 0) -> np.ndarray | None:
    """Sorted row numbers of a seeded random sample of ``size`` documents when ``n`` exceeds it, else None (all)."""
    if n <= size:
        return None
    return np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))
