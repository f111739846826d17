"""``topic-atlas evaluate``: how good are the topics and how faithful is the map? All the metrics of one topic model
over one corpus as one JSON-ready dict (``metrics.json``, ``manifest["metrics"]``), for a build in memory or a cache
folder.

Every metric is a small function on plain arrays, so the build (in memory), this command (on a cache folder)
and ``bench/quality.py`` (on peer models) score the same way. The keys, each defined with its source where it is
computed:

- ``npmi``, ``topic_diversity``, ``outlier_fraction``, ``n_topics``, ``largest_topic_share``:
  pipeline.quality.topic_metrics (the terms and the sizes);
- ``trustworthiness_2d``, ``knn_recall_2d``: pipeline.quality.neighbour_metrics, computed as reported (k=10, in row
  blocks, sampled above TRUSTWORTHINESS_SAMPLE documents) by pipeline.quality.map_metrics;
- with a categorical reference column (``decision`` for ICLR): ``nmi_reference``, ``ari_reference``
  (pipeline.quality.agreement), ``knn_accuracy_embedding`` and ``knn_accuracy_2d`` (a k=10 nearest-neighbour
  classifier of the reference under 10-fold stratified cross-validation, neighbour_metrics) beside
  ``reference_majority_share``, the accuracy of always guessing the commonest value.

pipeline.quality.metric_table prints them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.quality.agreement import (
    agreement_references,
    has_reference,
    majority_share,
    reference_agreement,
    reference_column,
)
from pipeline.quality.map_metrics import EVALUATION_SAMPLE, TRUSTWORTHINESS_SAMPLE, map_metrics
from pipeline.quality.neighbour_metrics import NEIGHBOURS
from pipeline.quality.topic_metrics import coherence_metrics, topic_shares

if TYPE_CHECKING:  # evaluate_cache's argument: the metrics need no cache reading code
    from pipeline.cache import TopicCache

METRICS_FILE = "metrics.json"


# The metrics map_metrics measures, as evaluate_topics' flat keys (the last two only with a reference column) and as
# each reference block's keys.
FLAT_MAP_FIGURES = ("trustworthiness_2d", "knn_recall_2d", "knn_accuracy_embedding", "knn_accuracy_2d")
REFERENCE_MAP_FIGURES = ("knn_accuracy_embedding", "knn_accuracy_2d")


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    return value


def evaluate_topics(
    texts: Sequence[str],
    topics: Sequence[int] | np.ndarray,
    topic_terms: Mapping[int, Sequence[str]],
    embeddings: np.ndarray | None = None,
    coordinates: np.ndarray | None = None,
    reference: Sequence[Any] | None = None,
    reference_name: str | None = None,
    k: int = NEIGHBOURS,
    knn_indices: np.ndarray | None = None,
    map_figures: Mapping[str, float | None] | None = None,
    references: Mapping[str, Sequence[Any]] | None = None,
    coherence_figures: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """All metrics of one topic model over one corpus, as a JSON-ready dict (see the module docstring).

    Parameters
    ----------
    texts : the n model texts (reference corpus for NPMI).
    topics : int, n; topic per document, -1 = outlier.
    topic_terms : {topic: terms, best first}.
    embeddings : float, n x dim, or None to skip the map and embedding metrics.
    coordinates : float, n x 2 map positions, or None to skip the map metrics.
    reference : n categorical values (e.g. decisions), or None to skip the reference metrics.
    reference_name : the reference column's name, recorded as ``reference_column``.
    k : neighbours for the map and kNN metrics.
    knn_indices : int, n x m (m > k), each row's cosine neighbours in the embedding space, itself included (the
        build's :func:`pipeline.geometry.neighbors.cosine_knn` output), to save computing them again.
    map_figures : the output of :func:`map_metrics` when already known (the build caches it), else computed here.
    references : {column: n categorical values} (from :func:`agreement_references`): each gets a block
        ``metrics["references"][column]`` with nmi, ami, ari, knn_accuracy_embedding, knn_accuracy_2d,
        majority_share and n_classes (the flat keys above describe ``reference`` alone, for older readers).
    coherence_figures : the output of :func:`coherence_metrics` for these texts and terms when already known (the
        build measures it while the map is still being drawn), else computed here.

    Metrics that cannot be computed (too few documents, no map) are None. NaN never appears (JSON has none).
    """
    topics = np.asarray(topics, dtype=np.int64)
    n = len(topics)
    if len(texts) != n:
        raise ValueError(f"{len(texts)} texts for {n} topic assignments")
    metrics: dict[str, Any] = {
        "n_documents": n,
        "k": k,
        "map_metrics_sample": min(n, EVALUATION_SAMPLE),
        "trustworthiness_sample": n if n <= EVALUATION_SAMPLE else TRUSTWORTHINESS_SAMPLE,
        **topic_shares(topics),
    }
    metrics.update(coherence_figures if coherence_figures is not None else coherence_metrics(texts, topic_terms))
    references = {name: values for name, values in (references or {}).items() if has_reference(values)}
    if map_figures is None:
        map_figures = map_metrics(embeddings, coordinates, reference, k, knn_indices, references)
    metrics |= dict.fromkeys(FLAT_MAP_FIGURES[:2])  # the map's figures, filled in by with_map_figures
    if has_reference(reference):
        metrics["reference_column"] = reference_name
        metrics.update(
            {key: value for key, value in reference_agreement(topics, reference).items() if key != "ami_reference"}
        )
        metrics |= dict.fromkeys(FLAT_MAP_FIGURES[2:])
        metrics["reference_majority_share"] = majority_share(reference)
    metrics = {key: _rounded(value) for key, value in metrics.items()}
    if references:
        metrics["references"] = {name: reference_block(topics, values) for name, values in references.items()}
    return with_map_figures(metrics, map_figures)


def with_map_figures(metrics: dict[str, Any], map_figures: Mapping[str, float | None]) -> dict[str, Any]:
    """``metrics`` (:func:`evaluate_topics`' output) with the map's figures (:func:`map_metrics`' output) in their
    places, rounded: the flat FLAT_MAP_FIGURES that ``metrics`` has, and each reference block's two kNN accuracies
    (``"<column>:knn_accuracy_embedding"`` and ``"<column>:knn_accuracy_2d"``). A figure ``map_figures`` lacks is
    None. The build evaluates the topics while the map thread still measures the map, and fills them in once it has
    (pipeline.operations.build.run_build). Returns a new dict; ``metrics`` is not changed."""
    filled = dict(metrics)
    for key in FLAT_MAP_FIGURES:
        if key in filled:
            filled[key] = _rounded(map_figures.get(key))
    if isinstance(filled.get("references"), dict):
        filled["references"] = {
            name: block | {key: _rounded(map_figures.get(f"{name}:{key}")) for key in REFERENCE_MAP_FIGURES}
            for name, block in filled["references"].items()
        }
    return filled


def reference_block(topics: np.ndarray, values: Sequence[Any]) -> dict[str, Any]:
    """One column's agreement figures (see evaluate_topics' ``references``), rounded, None where not computable;
    its kNN accuracies None until :func:`with_map_figures` fills them in."""
    agreement = reference_agreement(topics, values)
    block = {
        "nmi": agreement["nmi_reference"],
        "ami": agreement["ami_reference"],
        "ari": agreement["ari_reference"],
        **dict.fromkeys(REFERENCE_MAP_FIGURES),
        "majority_share": majority_share(values),
        "n_classes": int(pd.Series(list(values), dtype=object).dropna().nunique()),
    }
    return {key: _rounded(value) for key, value in block.items()}


def cache_texts(documents: pd.DataFrame) -> list[str]:
    """The model texts of a cache's documents: ``join_title_abstract(model_text(title), model_text(abstract))``."""
    from pipeline.ingest.clean import join_title_abstract, model_text

    def text(value: Any) -> str:
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)

    return [
        join_title_abstract(model_text(text(title)), model_text(text(abstract)))
        for title, abstract in zip(documents["title"], documents["abstract"])
    ]


def evaluate_cache(topic_cache: TopicCache) -> dict[str, Any]:
    """All metrics of a :class:`pipeline.cache.TopicCache` (documents, topics, embeddings); see evaluate_topics."""
    documents, topics = topic_cache.documents, topic_cache.topics
    topic_terms = {int(row.topic): [term for term, _ in row.top_terms] for row in topics.itertuples()}
    column = reference_column(documents)
    return evaluate_topics(
        cache_texts(documents),
        documents["topic"].to_numpy(),
        topic_terms,
        embeddings=topic_cache.embeddings(),
        coordinates=documents[["x", "y"]].to_numpy(dtype=np.float64),
        reference=documents[column].tolist() if column else None,
        reference_name=column,
        references=agreement_references(documents),
    )
