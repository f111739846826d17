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
from pipeline.quality.neighbour_metrics import (
    CV_FOLDS,
    LEAST_POPULATED_CLASS,
    NEIGHBOURS,
    PenaltyBlocks,
    drop_self,
    embedding_neighbours,
    knn_accuracy_unsilenced,
    knn_recall,
    map_neighbours,
    penalties_trustworthiness,
)
from pipeline.represent.unit_rows import normalise_rows
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

    They are most of the evaluation's time (about 5 s of 8 on 11,672 titles), so the build caches them with the
    layouts: a rebuild that changes only clustering or topic parameters reuses them. ``threads`` > 1 runs the kNN
    accuracies and the trustworthiness's row blocks (:class:`PenaltyBlocks`), nearly all of the time, in that many
    threads (pipeline.runtime.tasks.run_tasks): the same figures, sooner when a core is free (the build's map thread
    passes 2: the main thread waits for it at the end). Raises ValueError when ``threads`` < 1.
    """
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    n = 0 if embeddings is None else len(embeddings)
    figures: dict[str, float | None] = {"trustworthiness_2d": None, "knn_recall_2d": None}
    sample = evaluation_sample(n)
    chosen = np.arange(n) if sample is None else sample
    blocks = None
    if embeddings is not None and coordinates is not None and k < n / 2:
        map_knn = map_neighbours(coordinates, k)
        blocks = PenaltyBlocks(
            embeddings, map_knn, None if sample is None else trustworthiness_sample(n), penalty_block_rows(n)
        )
        if knn_indices is not None and knn_indices.shape[1] > k:
            embedding_knn = drop_self(knn_indices, k)
        else:
            embedding_knn = embedding_neighbours(embeddings, k)
        figures["knn_recall_2d"] = knn_recall(
            embeddings[chosen], coordinates[chosen], k, embedding_knn=embedding_knn[chosen], map_knn=map_knn[chosen]
        )
    columns = {"": reference, **(references or {})}  # "": the flat knn_accuracy_* keys of ``reference``
    accuracy_keys, accuracy_tasks = reference_accuracy_tasks(embeddings, coordinates, columns, chosen, k)
    with warnings.catch_warnings():  # here, not in the threads (see knn_accuracy_unsilenced)
        warnings.filterwarnings("ignore", message=LEAST_POPULATED_CLASS)
        results = run_tasks([*accuracy_tasks, *(blocks.tasks() if blocks is not None else [])], threads)
    figures |= {key: None if index is None else results[index] for key, index in accuracy_keys.items()}
    if blocks is not None:
        figures["trustworthiness_2d"] = penalties_trustworthiness(blocks.penalties, n, k)
    return figures


def reference_accuracy_tasks(
    embeddings: np.ndarray | None,
    coordinates: np.ndarray | None,
    columns: Mapping[str, Sequence[Any] | None],
    chosen: np.ndarray,
    k: int = NEIGHBOURS,
) -> tuple[dict[str, int | None], list[Callable[[], float]]]:
    """The kNN accuracies of :func:`map_metrics` as tasks for pipeline.runtime.tasks.run_tasks: ({figure key: index
    of its task, or None for a figure that cannot be computed}, the tasks).

    ``columns``: name -> values (n); the name "" gives the keys knn_accuracy_embedding and knn_accuracy_2d, any other
    ``"<name>:knn_accuracy_embedding"`` and ``"<name>:knn_accuracy_2d"``. Each is cross-validated over the rows
    ``chosen``, on the unit embeddings and on the map (Euclidean). A column without two distinct values gets no
    ``<name>:`` keys (and "" None figures); a column with the values of one listed before shares its tasks. The tasks
    call knn_accuracy_unsilenced: run them under a warnings filter for LEAST_POPULATED_CLASS.
    """
    # Euclidean on unit rows ranks neighbours as cosine does (|a - b|^2 = 2 - 2 cos) and takes scikit-learn's
    # matrix-product path: the same accuracy (0.3743 on the titles) in 1.6 s instead of 3.0.
    spaces = {
        "embedding": None if embeddings is None else normalise_rows(embeddings[chosen]),
        "2d": None if coordinates is None else np.asarray(coordinates)[chosen],
    }
    keys: dict[str, int | None] = {}
    tasks: list[Callable[[], float]] = []
    seen: dict[tuple[str, ...], dict[str, int | None]] = {}
    for name, values in columns.items():
        prefix = f"{name}:" if name else ""
        if not has_reference(values):
            if not name:
                keys |= {"knn_accuracy_embedding": None, "knn_accuracy_2d": None}
            continue
        signature = tuple("" if value is None else str(value) for value in values)
        if signature not in seen:
            picked = [values[i] for i in chosen.tolist()]
            seen[signature] = {}
            for space, features in spaces.items():
                seen[signature][space] = None if features is None else len(tasks)
                if features is not None:
                    tasks.append(partial(knn_accuracy_unsilenced, features, picked, "euclidean", k, CV_FOLDS, 0))
        keys |= {f"{prefix}knn_accuracy_{space}": index for space, index in seen[signature].items()}
    return keys, tasks


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
