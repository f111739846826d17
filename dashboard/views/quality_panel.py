"""The "How good is this map?" panel: the build's quality metrics in plain language. Pure pandas plus one
Streamlit helper, :func:`render`, which takes the ``streamlit`` module as an argument (so this file imports no
Streamlit and its functions can be tested without a browser).

The metrics come from the cache manifest's ``metrics`` (written by the build's evaluate stage, or by
``topic-atlas evaluate``); see :mod:`pipeline.quality.evaluation` for their definitions and sources.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

# key -> (name shown, how the value is written, what it means for a reader). Kinds: "int", "share" (as a
# percentage), "score" (3 decimals).
METRICS: dict[str, tuple[str, str, str]] = {
    "n_topics": ("Topics", "int", "Topics found, not counting the outliers."),
    "outlier_fraction": ("Outliers", "share", "Papers that fit no topic well enough; shown in grey."),
    "largest_topic_share": ("Largest topic", "share", "Share of all papers in the biggest topic."),
    "npmi": (
        "Term coherence (NPMI)",
        "score",
        "Do a topic's top 10 terms occur near each other in the "
        "papers' text? -1 never, 0 as often as by chance, 1 always.",
    ),
    "topic_diversity": (
        "Term diversity",
        "share",
        "Share of distinct terms among all topics' top 25; 100% means no two topics share a term.",
    ),
    "trustworthiness_2d": (
        "Map trustworthiness",
        "score",
        "Are papers drawn close together on the map also similar in "
        "meaning? 1 = always; lower means misleading neighbours on the map.",
    ),
    "knn_recall_2d": (
        "Neighbours kept on the map",
        "share",
        "Of each paper's 10 most similar papers, the share that are also among its 10 nearest on the map.",
    ),
    "nmi_reference": (
        "Topics vs decisions (NMI)",
        "score",
        "How much the topics tell about the decision (0 = nothing, 1 = everything).",
    ),
    "ari_reference": (
        "Topics vs decisions (ARI)",
        "score",
        "Agreement of topics with decisions beyond chance (0 = chance).",
    ),
    "knn_accuracy_embedding": (
        "Decision from similar papers",
        "share",
        "How often the commonest decision among a paper's 10 most "
        "similar papers is its own (10-fold cross-validation).",
    ),
    "knn_accuracy_2d": ("Decision from map neighbours", "share", "The same, using the 10 nearest papers on the map."),
    "reference_majority_share": (
        "Commonest decision",
        "share",
        "The accuracy of always guessing the commonest decision: the baseline for the two rows above.",
    ),
}


# metrics["references"][name] (written by the build for corpora with a primary_area column): key -> (name shown,
# kind, meaning); "{name}" is the reference's name in words ("primary area", "decision").
REFERENCE_METRICS: dict[str, tuple[str, str, str]] = {
    "n_classes": ("Classes", "int", "How many different {name}s the papers carry."),
    "nmi": (
        "Topics vs {name} (NMI)",
        "score",
        "How much the topics tell about the {name} (0 = nothing, 1 = everything).",
    ),
    "ami": (
        "Topics vs {name} (AMI)",
        "score",
        "The same, corrected for chance (0 = what random topics of these sizes would give).",
    ),
    "ari": ("Topics vs {name} (ARI)", "score", "Agreement of topics with the {name}s beyond chance (0 = chance)."),
    "knn_accuracy_embedding": (
        "{Name} from similar papers",
        "share",
        "How often the commonest {name} among a paper's 10 most similar papers is its own.",
    ),
    "knn_accuracy_2d": ("{Name} from map neighbours", "share", "The same, using the 10 nearest papers on the map."),
    "majority_share": (
        "Commonest {name}",
        "share",
        "The accuracy of always guessing the commonest {name}: the baseline for the two rows above.",
    ),
}
REFERENCE_NAMES = {"primary_area": "primary area", "decision": "decision"}


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_value(value: Any, kind: str) -> str:
    """A metric value as text: "int" -> "15", "share" -> "4.9%", "score" -> "0.062"; missing -> "n/a"."""
    if _missing(value):
        return "n/a"
    if kind == "int":
        return f"{int(value)}"
    if kind == "share":
        return f"{100 * float(value):.1f}%"
    return f"{float(value):.3f}"


def metrics_table(metrics: Mapping[str, Any] | None) -> pd.DataFrame:
    """One row per known metric present in ``metrics``: columns metric (name), value (text), meaning.

    Rows follow METRICS' order; unknown keys and missing values are left out; decision rows appear only when the
    corpus had a reference column. Returns an empty table (same columns) for None or {}.
    """
    rows = []
    for key, (name, kind, meaning) in METRICS.items():
        value = (metrics or {}).get(key)
        if _missing(value):
            continue
        rows.append({"metric": name, "value": format_value(value, kind), "meaning": meaning})
    return pd.DataFrame(rows, columns=["metric", "value", "meaning"])


def reference_table(metrics: Mapping[str, Any] | None, reference: str = "primary_area") -> pd.DataFrame:
    """Rows of ``metrics["references"][reference]`` (the build's agreement of topics and map with a label column):
    columns metric, value, meaning, in REFERENCE_METRICS' order, missing values left out. Empty (same columns)
    when the manifest has no such block (caches built before it, or corpora without the column)."""
    block = ((metrics or {}).get("references") or {}).get(reference) or {}
    name = REFERENCE_NAMES.get(reference, reference.replace("_", " "))
    rows = []
    for key, (label, kind, meaning) in REFERENCE_METRICS.items():
        value = block.get(key)
        if _missing(value):
            continue
        rows.append(
            {
                "metric": label.format(name=name, Name=name.capitalize()),
                "value": format_value(value, kind),
                "meaning": meaning.format(name=name),
            }
        )
    return pd.DataFrame(rows, columns=["metric", "value", "meaning"])


def faithfulness_note(metrics: Mapping[str, Any] | None) -> str:
    """One or two sentences on how far to trust distances on the map, from ``knn_recall_2d`` (and ``k``).

    E.g. "On average 22% of a paper's 10 nearest neighbours are also its neighbours on this map; use the
    similar-papers list, not distance on the map." Says so when the map was not measured.
    """
    metrics = metrics or {}
    recall: Any = metrics.get("knn_recall_2d")  # a number from metrics.json; None or NaN when not measured
    k = int(metrics.get("k") or 10)
    if _missing(recall):
        return (
            "The map's faithfulness was not measured (too few papers); "
            "use the similar-papers list to find related work."
        )
    share = f"{100 * float(recall):.0f}%"
    sentence = f"On average {share} of a paper's {k} nearest neighbours are also its neighbours on this map"
    if recall < 0.5:
        return f"{sentence}; use the similar-papers list, not distance on the map."
    return f"{sentence}; nearby points are a fair guide, and the similar-papers list is exact."


def render(st: Any, manifest: Mapping[str, Any]) -> None:
    """Draw the panel with the ``streamlit`` module ``st``: a subheader, the faithfulness note and the table.

    ``manifest`` is the cache manifest; a cache built before metrics existed gets a hint to run the evaluate command.
    """
    st.subheader("How good is this map?")
    metrics = manifest.get("metrics") if manifest else None
    if not metrics:
        st.info("This cache has no quality metrics. Rebuild it, or run: topic-atlas evaluate --cache <folder>")
        return
    st.caption(faithfulness_note(metrics))
    st.dataframe(metrics_table(metrics), hide_index=True, width="stretch")
    areas = reference_table(metrics, "primary_area")
    if not areas.empty:
        st.markdown("**Topics and the map against OpenReview's primary areas**")
        st.dataframe(areas, hide_index=True, width="stretch")
