"""Pure helpers of the "Find and place" tab: map overlays of search hits and placed papers.

Search and placement themselves live in :mod:`pipeline.operations.place` (shared with ``topic-atlas place``);
this module only shapes their results for the page.
"""

from __future__ import annotations

import pandas as pd

from dashboard.display import document_heading, escaped_lines, plotly_escape


def best_hits(matching: pd.DataFrame, ranked: pd.DataFrame, k: int) -> pd.DataFrame:
    """The ``k`` first rows of ``ranked`` (papers ranked best first, with doc_id) whose doc_id is among
    ``matching``'s."""
    return ranked[ranked["doc_id"].isin(set(matching["doc_id"]))].head(k)


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
