"""The build's metrics through the layout store: the map metrics (stage map_metrics: its key, the cached call, and
the function the map thread measures with) and the figures of the evaluate stage (:func:`evaluate_build`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from pipeline.geometry.neighbors import Neighbours
from pipeline.store.keys import StageKey, fingerprint, stage_key, texts_fingerprint
from pipeline.store.layouts import StageStore

# The map's metrics (their kNN accuracies and trustworthiness blocks) run in this many threads
# (pipeline.quality.map_metrics.map_metrics): the map thread measures them last, while the main thread makes the
# tables and then waits for them (map_metrics_wait), so a second core is free (docs/decisions/map-metrics-threads.md).
MAP_METRICS_THREADS = 2


def references_fingerprint(values: list[Any] | None) -> str:
    """SHA-256 hex of a reference column's values in document order, each by ``str`` (None kept as null)."""
    return hashlib.sha256(
        json.dumps([None if value is None else str(value) for value in values or []]).encode("utf-8")
    ).hexdigest()


def map_metrics_key(
    embeddings_key: str,
    coordinates: np.ndarray,
    neighbours: StageKey,
    reference: list[Any] | None,
    references: dict[str, list[Any]],
) -> StageKey:
    """The key of stage "map_metrics": the embeddings' fingerprint, the map's (float32 n x 2; it may come from UMAP,
    the refinement or PCA), the neighbour lists' key, the reference columns' fingerprints, pipeline.quality.map_metrics'
    code (with the modules it imports), numpy, scipy and scikit-learn."""
    return stage_key(
        "map_metrics",
        inputs={
            "embeddings": embeddings_key,
            "map": fingerprint(np.ascontiguousarray(coordinates, dtype=np.float32)),
            "neighbours": neighbours,
            "reference": references_fingerprint(reference),
            "references": texts_fingerprint(
                f"{name}={references_fingerprint(values)}" for name, values in sorted(references.items())
            ),
        },
        libraries=("numpy", "scipy", "scikit-learn"),
        code=("pipeline.quality.map_metrics",),
    )


def cached_map_metrics(
    layouts: StageStore,
    embeddings_key: str,
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    reference: list[Any] | None,
    references: dict[str, list[Any]],
    knn: Neighbours,
    compute: Callable[..., dict[str, float | None]],
) -> dict[str, float | None]:
    """``compute(embeddings, coordinates, reference, knn_indices=..., references=..., threads=MAP_METRICS_THREADS)``
    (pipeline.quality.map_metrics.map_metrics), through the layout store under :func:`map_metrics_key` (a None figure is
    stored as NaN). ``coordinates``: the map, float32 n x 2; ``knn``: the build's neighbour lists."""

    def run() -> dict[str, np.ndarray]:
        figures = compute(
            embeddings,
            coordinates,
            reference,
            knn_indices=knn.indices,
            references=references,
            threads=MAP_METRICS_THREADS,
        )
        return {name: np.asarray(np.nan if value is None else value, dtype=float) for name, value in figures.items()}

    key = map_metrics_key(embeddings_key, coordinates, knn.key, reference, references)
    stored = layouts.cached(key, run)
    return {name: None if np.isnan(value) else float(value) for name, value in stored.items()}


def map_metrics_measurer(
    layouts: StageStore, embeddings_key: str, embeddings: np.ndarray, documents: pd.DataFrame
) -> Callable[[np.ndarray, Neighbours], dict[str, float | None]]:
    """The function the map thread measures the map with (pipeline.geometry.map_job.map_drawer): given the map
    (float32 n x 2) and the build's neighbour lists, :func:`cached_map_metrics` of them, the embeddings and
    ``documents``' reference columns (read now, in the calling thread)."""
    from pipeline.quality.agreement import agreement_references, reference_column
    from pipeline.quality.map_metrics import map_metrics

    column = reference_column(documents)
    reference = documents[column].tolist() if column else None
    references = agreement_references(documents)

    def measure(coordinates: np.ndarray, knn: Neighbours) -> dict[str, float | None]:
        return cached_map_metrics(
            layouts, embeddings_key, embeddings, coordinates, reference, references, knn, map_metrics
        )

    return measure


def evaluate_build(
    documents: pd.DataFrame,
    texts: list[str],
    topics: np.ndarray,
    topic_terms: dict[int, list[tuple[str, float]]],
    embeddings: np.ndarray,
    embeddings_key: str,
    coordinates: np.ndarray,
    knn: Neighbours,
    layouts: StageStore,
    map_figures: dict[str, float | None] | None = None,
    coherence_figures: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The evaluate stage's metrics (pipeline.quality.evaluation.evaluate_topics) of a build: ``documents`` (their
    reference columns), ``texts`` and ``topics`` (int, n) in the canonical order, ``topic_terms`` ({topic: [(term,
    weight), ...]}), the embeddings (float32 n x dim) and their fingerprint, the map (float32 n x 2) and the neighbour
    lists. Those that depend only on the embeddings, the map and the reference columns are the map thread's
    (``map_figures``), else from the layout store when it has them; ``coherence_figures``: the terms' metrics
    measured while the map thread worked (stage evaluate_terms). ``map_figures`` ``{}``: every map figure None, for
    pipeline.quality.evaluation.with_map_figures to fill in once the map thread has measured them."""
    from pipeline.quality.agreement import agreement_references, reference_column
    from pipeline.quality.evaluation import evaluate_topics
    from pipeline.quality.map_metrics import map_metrics

    column = reference_column(documents)
    reference = documents[column].tolist() if column else None
    references = agreement_references(documents)
    if map_figures is None:
        map_figures = cached_map_metrics(
            layouts, embeddings_key, embeddings, coordinates, reference, references, knn, map_metrics
        )
    return evaluate_topics(
        texts,
        topics,
        {topic: [term for term, _ in pairs] for topic, pairs in topic_terms.items()},
        embeddings,
        coordinates,
        reference=reference,
        reference_name=column,
        knn_indices=knn.indices,
        map_figures=map_figures,
        references=references,
        coherence_figures=coherence_figures,
    )
