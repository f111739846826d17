"""The map of an add's candidate new topics: every paper in grey, the candidates' papers in colour (pure: tables in,
a plotly figure out). Text from the corpus reaches plotly only through dashboard.display.plotly_escape."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from dashboard.display import FONT_FAMILY, OUTLIER_COLOUR, plotly_escape, shorten

# 24 distinct colours (plotly's qualitative Dark24): an add finds rarely more than 20 candidates.
CANDIDATE_COLOURS = qualitative.Dark24

CANDIDATE_MAP_NAME = "Candidate new topics on the map"


def candidate_map_figure(documents: pd.DataFrame, candidates: pd.DataFrame, members: pd.Series) -> go.Figure:
    """Scatter (WebGL) of every paper of ``documents`` (doc_id, x, y, title) in light grey and, over them, the papers
    of each candidate (``members``: {doc_id: candidate id}, dashboard.tables.candidates.candidate_members) in its own
    colour, named in the legend by the candidate's label (``candidates``: candidate, label, size)."""
    figure = go.Figure()
    figure.add_trace(
        go.Scattergl(
            x=documents["x"],
            y=documents["y"],
            mode="markers",
            marker={"size": 3, "color": OUTLIER_COLOUR, "opacity": 0.25},
            name="Other papers",
            hoverinfo="skip",
        )
    )
    chosen = documents[documents["doc_id"].astype(str).isin(members.index)]
    of = chosen["doc_id"].astype(str).map(members)
    for row in candidates.sort_values("size", ascending=False).itertuples(index=False):
        papers = chosen[of == int(row.candidate)]
        if papers.empty:
            continue
        figure.add_trace(
            go.Scattergl(
                x=papers["x"],
                y=papers["y"],
                mode="markers",
                marker={
                    "size": 7,
                    "color": CANDIDATE_COLOURS[int(row.candidate) % len(CANDIDATE_COLOURS)],
                    "line": {"width": 0.5, "color": "#333"},
                },
                name=plotly_escape(f"{shorten(str(row.label), 40)} ({int(row.size)})"),
                text=[plotly_escape(shorten(str(title), 90)) for title in papers["title"].fillna("")],
                hovertemplate="%{text}<extra>%{fullData.name}</extra>",
            )
        )
    figure.update_layout(
        template="plotly_white",
        height=560,
        margin={"l": 8, "r": 8, "t": 50, "b": 8},
        title={
            "text": "Papers of the candidate new topics (colour) among the atlas (grey)",
            "x": 0,
            "font": {"size": 16},
        },
        font={"family": FONT_FAMILY, "size": 11},
        xaxis={"visible": False},
        yaxis={"visible": False, "scaleanchor": "x"},
        legend={"itemsizing": "constant"},
    )
    return figure
