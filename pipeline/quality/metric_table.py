"""The metrics as a plain-text table (``topic-atlas evaluate``, ``bench/quality.py``): the scalar metrics of
pipeline.quality.evaluation in a fixed order, one column of values per model, each row with what it means."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Scalar metrics in the order the table prints them: (key, short description).
TABLE_ROWS = (
    ("n_documents", "documents"),
    ("n_topics", "topics (without -1)"),
    ("outlier_fraction", "share of documents in topic -1"),
    ("largest_topic_share", "largest topic's share of documents"),
    ("npmi", "NPMI of top 10 terms, mean over topics"),
    ("npmi_topics_skipped", "topics with < 2 scorable terms"),
    ("npmi_terms_scored_mean", "scorable terms per topic (of 10)"),
    ("topic_diversity", "unique share of top 25 terms"),
    ("trustworthiness_2d", "trustworthiness of the 2D map, k=10"),
    ("knn_recall_2d", "10-NN overlap, map vs embedding"),
    ("nmi_reference", "NMI of topics vs reference"),
    ("ari_reference", "ARI of topics vs reference"),
    ("knn_accuracy_embedding", "10-NN accuracy of reference, embedding"),
    ("knn_accuracy_2d", "10-NN accuracy of reference, map"),
    ("reference_majority_share", "accuracy of guessing the commonest value"),
    ("references.primary_area.knn_accuracy_embedding", "10-NN accuracy of primary area, embedding"),
    ("references.primary_area.knn_accuracy_2d", "10-NN accuracy of primary area, map"),
    ("references.primary_area.ami", "AMI of topics vs primary area"),
    ("references.primary_area.majority_share", "commonest primary area's share"),
)


def format_table(metrics: Mapping[str, Any], columns: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """A plain-text table of the scalar metrics: one column of values, or one per entry of ``columns``
    ({name: metrics}), in which case ``metrics`` is ignored. Missing values print as "-"."""
    columns = dict(columns) if columns else {"value": metrics}
    width = max(len(name) for name in columns) + 2
    lines = [f"{'metric':<28}" + "".join(f"{name:>{max(width, 10)}}" for name in columns) + "   meaning"]
    for key, meaning in TABLE_ROWS:
        values = [lookup(column, key) for column in columns.values()]
        if all(value is None for value in values):
            continue
        cells = "".join(f"{_format_value(value):>{max(width, 10)}}" for value in values)
        lines.append(f"{key.replace('references.primary_area.', 'area_'):<28}{cells}   {meaning}")
    return "\n".join(lines)


def lookup(metrics: Mapping[str, Any], key: str) -> Any:
    """A metric by its key; a dotted key reads nested blocks ("references.primary_area.ami"). None when absent."""
    value: Any = metrics
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _format_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
