"""Candidate new topics of an add (candidates.parquet; pipeline.topics.candidates): pure table builders, pandas only.

An ``add`` places new papers into the atlas's topics without a refit; the new papers that fit no topic are grouped
into candidate topics, each with a name, its papers and the existing topic nearest it. These builders turn that
table into what the "What changed" tab lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dashboard.display import shorten

OVERVIEW_COLUMNS = ["candidate", "label", "subtitle", "size", "terms", "nearest", "nearest_similarity"]
PAPER_COLUMNS = ["doc_id", "title", "collection", "placed_in", "fit_similarity"]


def shown_candidates(candidates: pd.DataFrame, history: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, int | None]:
    """(the candidates the "What changed" tab lists, the add they belong to: its 1-based number in
    manifest["add_history"], ``history``): those the last add found and those of earlier adds that its papers joined
    (its report's ``candidates.grown``); when it did neither, those of the newest add that found any. (empty, None)
    without candidates."""
    if candidates.empty:
        return candidates, None
    last = len(history)
    report = (history[-1].get("candidates") or {}) if history else {}
    grown = {int(entry["candidate"]) for entry in report.get("grown", [])}
    of_last = (candidates["batch"] == last) | candidates["candidate"].isin(grown)
    if of_last.any():
        return candidates[of_last], last
    batch = int(candidates["batch"].max())
    return candidates[candidates["batch"] == batch], batch


def candidate_overview(candidates: pd.DataFrame, labels: Mapping[int, str], batch: int | None = None) -> pd.DataFrame:
    """One row per candidate (of add ``batch``, default every add), largest first: candidate id, label, subtitle,
    size, its terms joined, the nearest existing topic as "id · label" and that cosine similarity (OVERVIEW_COLUMNS).
    ``labels``: {topic id: label} (dashboard.display.topic_labels)."""
    chosen = candidates if batch is None else candidates[candidates["batch"] == batch]
    if chosen.empty:
        return pd.DataFrame(columns=OVERVIEW_COLUMNS)
    rows = [
        {
            "candidate": int(row.candidate),
            "label": str(row.label),
            "subtitle": str(row.subtitle),
            "size": int(row.size),
            "terms": ", ".join(str(term) for term, _ in list(row.top_terms)[:8]),
            "nearest": _topic_name(row.nearest_topic, labels),
            "nearest_similarity": float(row.nearest_similarity),
        }
        for row in chosen.itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=OVERVIEW_COLUMNS).sort_values(["size", "candidate"], ascending=[False, True])


def _topic_name(topic: Any, labels: Mapping[int, str]) -> str:
    if topic is None or pd.isna(topic) or int(topic) == -1:
        return "none"
    return f"{int(topic)} · {shorten(str(labels.get(int(topic), '')), 50)}"


def candidate_papers(
    candidates: pd.DataFrame, documents: pd.DataFrame, candidate: int, labels: Mapping[int, str]
) -> pd.DataFrame:
    """The papers of one candidate, most typical first (PAPER_COLUMNS): id, title, collection ("" without one), the
    topic the add placed it in ("id · label") and its similarity to its nearest topic centroid (``fit_similarity``,
    NaN where the cache lacks it). Empty when the candidate is unknown."""
    found = candidates[candidates["candidate"] == candidate]
    if found.empty:
        return pd.DataFrame(columns=PAPER_COLUMNS)
    ids = list(found.iloc[0]["doc_ids"])
    rows = documents.set_index(documents["doc_id"].astype(str)).reindex(ids)
    return pd.DataFrame(
        {
            "doc_id": ids,
            "title": rows["title"].fillna("").astype(str).to_numpy(),
            "collection": rows["collection"].fillna("").astype(str).to_numpy() if "collection" in rows else "",
            "placed_in": [_topic_name(topic, labels) for topic in rows["topic"]],
            "fit_similarity": rows["fit_similarity"].astype(float).to_numpy()
            if "fit_similarity" in rows
            else float("nan"),
        },
        columns=PAPER_COLUMNS,
    )


def candidate_members(candidates: pd.DataFrame, batch: int | None = None) -> pd.Series:
    """{doc_id: candidate id} of the papers of every candidate (of add ``batch``, default every add)."""
    chosen = candidates if batch is None else candidates[candidates["batch"] == batch]
    pairs = [(str(doc_id), int(row.candidate)) for row in chosen.itertuples(index=False) for doc_id in row.doc_ids]
    return pd.Series(dict(pairs), dtype="int64")
