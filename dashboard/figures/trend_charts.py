"""Trend and venue figures: shares per collection with their 95% intervals (dashboard/tables/trends.py tables in,
plotly figures out; no Streamlit)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.display import plotly_escape, shorten

PANELS_PER_ROW = 4


def small_multiples(shares: pd.DataFrame, labels: dict[int, str], group: str, denominator: str) -> go.Figure:
    """One panel per group (theme or topic id, labelled by ``labels``): its share of each collection's papers
    (x: collections in ``shares`` order, y: share, error bars: the Wilson interval). ``shares``: the table of
    dashboard.tables.trends.collection_shares; ``denominator``: what the shares are over, named in the title."""
    groups = list(dict.fromkeys(shares[group]))
    rows = max(1, -(-len(groups) // PANELS_PER_ROW))
    titles = [plotly_escape(shorten(labels.get(value, str(value)), 38)) for value in groups]
    figure = make_subplots(rows=rows, cols=PANELS_PER_ROW, subplot_titles=titles, shared_yaxes=False)
    for number, value in enumerate(groups):
        part = shares[shares[group] == value]
        figure.add_trace(
            go.Scatter(
                x=part["collection"],
                y=part["share"],
                mode="lines+markers",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": part["share_high"] - part["share"],
                    "arrayminus": part["share"] - part["share_low"],
                },
                showlegend=False,
                hovertemplate="%{x}: %{y:.1%}<extra></extra>",
            ),
            row=number // PANELS_PER_ROW + 1,
            col=number % PANELS_PER_ROW + 1,
        )
    figure.update_yaxes(tickformat=".0%", rangemode="tozero")
    figure.update_annotations(font_size=11)
    figure.update_layout(
        title=f"Share of each collection's papers, 95% Wilson intervals; denominator: {plotly_escape(denominator)}",
        height=max(320, 220 * rows),
        margin={"t": 90, "l": 40, "r": 20, "b": 30},
    )
    return figure


def venue_bars(shares: pd.DataFrame, labels: dict[int, str], group: str, title: str) -> go.Figure:
    """Grouped horizontal bars: per group (rows, labelled), each collection's share with its Wilson interval."""
    figure = go.Figure()
    for name, part in shares.groupby("collection", sort=False):
        figure.add_trace(
            go.Bar(
                y=[plotly_escape(shorten(labels.get(value, str(value)), 50)) for value in part[group]],
                x=part["share"],
                orientation="h",
                name=plotly_escape(str(name)),
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": part["share_high"] - part["share"],
                    "arrayminus": part["share"] - part["share_low"],
                },
                hovertemplate="%{y}: %{x:.1%}<extra>" + plotly_escape(str(name)) + "</extra>",
            )
        )
    figure.update_layout(
        barmode="group",
        title=plotly_escape(title),
        xaxis_tickformat=".0%",
        height=max(360, 28 * shares[group].nunique() * max(1, shares["collection"].nunique()) // 2),
        yaxis={"autorange": "reversed"},
        margin={"l": 320},
    )
    return figure
