"""Trend and venue figures: shares per collection with their 95% intervals (dashboard/tables/trends.py tables in,
plotly figures out; no Streamlit)."""

from __future__ import annotations

import textwrap

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.display import plotly_escape, shorten
from dashboard.figures.label_layout import wrap_name

PANELS_PER_ROW = 3  # four panels of 100 px each at 900 px with the sidebar open printed their titles over each other
PANEL_TITLE_CHARS = 22
TITLE_LINE_CHARS = 60  # a centred one-line title was cut on both sides at 900 px


def chart_title(text: str) -> dict:
    """A plotly title, left-aligned and wrapped at TITLE_LINE_CHARS so it never runs past the chart's edges."""
    lines = textwrap.wrap(" ".join(text.split()), TITLE_LINE_CHARS) or [""]
    return {"text": "<br>".join(plotly_escape(line) for line in lines), "x": 0, "xanchor": "left", "font": {"size": 14}}


def tick_names(collections: list[str]) -> dict[str, str]:
    """{collection: its tick label}: without the venue all of them share ("ICLR 2024" -> "2024"), else as is."""
    firsts = {str(name).split(" ")[0] for name in collections}
    if len(firsts) == 1 and all(" " in str(name) for name in collections):
        return {name: str(name).split(" ", 1)[1] for name in collections}
    return {name: str(name) for name in collections}


def small_multiples(shares: pd.DataFrame, labels: dict[int, str], group: str, denominator: str) -> go.Figure:
    """One panel per group (theme or topic id, labelled by ``labels``): its share of each collection's papers
    (x: collections in ``shares`` order, y: share, error bars: the Wilson interval). ``shares``: the table of
    dashboard.tables.trends.collection_shares; ``denominator``: what the shares are over, named in the title."""
    groups = list(dict.fromkeys(shares[group]))
    rows = max(1, -(-len(groups) // PANELS_PER_ROW))
    titles = [
        "<br>".join(plotly_escape(line) for line in wrap_name(labels.get(value, str(value)), PANEL_TITLE_CHARS))
        for value in groups
    ]
    ticks = tick_names(list(dict.fromkeys(shares["collection"])))
    figure = make_subplots(
        rows=rows,
        cols=PANELS_PER_ROW,
        subplot_titles=titles,
        shared_yaxes=False,
        vertical_spacing=min(0.3, 0.6 / rows),
        horizontal_spacing=0.08,
    )
    for number, value in enumerate(groups):
        part = shares[shares[group] == value]
        figure.add_trace(
            go.Scatter(
                x=part["collection"].map(ticks),
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
    # categories: "2024", "2025" read as numbers put ticks at 2024.5 and printed them over each other
    figure.update_xaxes(type="category")
    figure.update_annotations(font_size=11)
    title = chart_title(f"Share of each collection's papers, 95% Wilson intervals; denominator: {denominator}")
    # room above the first row for the title's lines and the panels' two-line names
    figure.update_layout(
        title=title,
        height=max(340, 240 * rows),
        margin={"t": 90 + 18 * title["text"].count("<br>"), "l": 40, "r": 20, "b": 30},
    )
    return figure


def venue_bars(shares: pd.DataFrame, labels: dict[int, str], group: str, title: str) -> go.Figure:
    """Grouped horizontal bars: per group (rows, labelled), each collection's share with its Wilson interval."""
    figure = go.Figure()
    for name, part in shares.groupby("collection", sort=False):
        figure.add_trace(
            go.Bar(
                y=[plotly_escape(shorten(labels.get(value, str(value)), 40)) for value in part[group]],
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
        title=chart_title(title),
        xaxis_tickformat=".0%",
        height=max(360, 28 * shares[group].nunique() * max(1, shares["collection"].nunique()) // 2),
        yaxis={"autorange": "reversed", "automargin": True},  # a fixed 320 px left 100 px for the bars at 900 px
        margin={"l": 8, "t": 70},
    )
    return figure
