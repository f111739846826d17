"""Pure helpers of the "Find and place" tab: map overlays of search hits and placed papers.

Search and placement themselves live in :mod:`pipeline.operations.place` (shared with ``topic-atlas place``);
this module only shapes their results for the page.
"""

from __future__ import annotations

import pandas as pd

from dashboard.display import document_heading, escaped_lines, plotly_escape


def best_hits(matching: pd.DataFrame, ranking: pd.DataFrame, documents: pd.DataFrame, k: int) -> pd.DataFrame:
    """The rows of ``documents`` of the ``k`` best-ranked papers whose doc_id is among ``matching``'s, best first,
    with a leading score column and index 0..k-1. ``ranking``: columns row (position in ``documents``) and score,
    best first (dashboard.state.resources.semantic_hits). The result is a copy of those k rows only, so a cache
    that keeps it holds nothing of the whole table."""
    doc_ids = documents["doc_id"].to_numpy()[ranking["row"].to_numpy()]
    chosen = ranking[pd.Series(doc_ids).isin(set(matching["doc_id"])).to_numpy()].head(k)
    hits = documents.iloc[chosen["row"].to_numpy()].reset_index(drop=True)
    hits.insert(0, "score", chosen["score"].to_numpy())
    return hits


def overlay_points(rows: pd.DataFrame, caption: str) -> pd.DataFrame:
    """Columns x, y, doc_id, hover for :func:`dashboard.figures.charts.highlight_points`, one row per row of ``rows``
    (needs x, y; title, abstract, doc_id when present): hover is the escaped heading plus ``caption``."""
    hover = [
        f"<b>{escaped_lines(document_heading(title, abstract))}</b><br>{plotly_escape(caption)}"
        for title, abstract in zip(rows.get("title", [None] * len(rows)), rows.get("abstract", [None] * len(rows)))
    ]
    doc_ids = rows["doc_id"] if "doc_id" in rows.columns else pd.Series([""] * len(rows))
    return pd.DataFrame(
        {"x": rows["x"].to_numpy(), "y": rows["y"].to_numpy(), "doc_id": doc_ids.astype(str).to_numpy(), "hover": hover}
    )
