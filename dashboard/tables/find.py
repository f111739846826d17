"""Pure helpers of the "Find and place" tab: semantic search hits and map overlays.

Search and placement themselves live in :mod:`pipeline.operations.place` (shared with ``python -m pipeline place``);
this module only shapes their results for the page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.display import document_heading, escaped_lines, plotly_escape


def search_hits(
    documents: pd.DataFrame,
    embeddings: np.ndarray,
    query_embedding: np.ndarray,
    allowed_ids: set[str] | None = None,
    k: int = 20,
) -> pd.DataFrame:
    """The ``k`` documents most cosine-similar to a query, among those whose doc_id is in ``allowed_ids``
    (the filtered papers; all when None).

    ``embeddings`` (n x dim, unit rows) is aligned with ``documents`` by position; ``query_embedding`` is (dim,).
    Returns those rows of ``documents`` with a leading ``score`` column, best first.
    """
    scores = embeddings @ query_embedding.astype(np.float32)
    positions = (
        np.arange(len(documents))
        if allowed_ids is None
        else np.flatnonzero(documents["doc_id"].isin(allowed_ids).to_numpy())
    )
    if positions.size == 0:
        return documents.iloc[0:0].assign(score=pd.Series(dtype=float))
    best = positions[np.argsort(-scores[positions], kind="stable")[:k]]
    hits = documents.iloc[best].copy()
    hits.insert(0, "score", scores[best].astype(float))
    return hits


def overlay_points(rows: pd.DataFrame, caption: str) -> pd.DataFrame:
    """Columns x, y, doc_id, hover for :func:`dashboard.figures.charts.highlight_points` (hover escaped, with ``caption``)."""
    hover = [
        f"<b>{escaped_lines(document_heading(title, abstract))}</b><br>{plotly_escape(caption)}"
        for title, abstract in zip(rows.get("title", [None] * len(rows)), rows.get("abstract", [None] * len(rows)))
    ]
    doc_ids = rows["doc_id"] if "doc_id" in rows.columns else pd.Series([""] * len(rows))
    return pd.DataFrame(
        {"x": rows["x"].to_numpy(), "y": rows["y"].to_numpy(), "doc_id": doc_ids.astype(str).to_numpy(), "hover": hover}
    )
