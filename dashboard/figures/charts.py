"""Plotly figures of a topic cache: topic sizes, top terms, and search hits or placed papers drawn on the map
(the map itself is :func:`dashboard.figures.plotly_map.map_figure`).

Every function here is pure: tables in, a ``plotly.graph_objects.Figure`` out, no Streamlit.
Plotly renders a subset of HTML (``<b>``, ``<br>``, ``<a>`` ...) in hover labels, annotations and
category tick labels, so every string that comes from the corpus goes through :func:`plotly_escape`
before it reaches a figure; the only markup added here is ``<br>`` between escaped pieces. Plotly decodes
``&amp;``, ``&lt;`` and ``&gt;`` but not ``&quot;`` or ``&#x27;``, so quotes are left as they are (7 ICLR 2025
titles have a double quote). Topic labels come from :func:`topic_labels` (pipeline.cache.display_labels), the
same unique, non-empty text everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.display import (
    FONT_FAMILY,
    OUTLIER_LABEL,
    OUTLIER_TOPIC,
    plotly_escape,
    shorten,
    topic_colour,
    topic_labels,
)


def _empty_notice(figure: go.Figure, message: str) -> go.Figure:
    figure.add_annotation(
        text=plotly_escape(message),
        x=0.5,
        y=0.5,
        xref="paper",
        yref="paper",
        showarrow=False,
        font={"size": 15, "color": "#555"},
    )
    return figure


def _hide_axes(figure: go.Figure) -> None:
    axis = {"showgrid": False, "zeroline": False, "showticklabels": False, "title": None, "showline": False}
    figure.update_xaxes(**axis)
    figure.update_yaxes(**axis)


def highlight_points(
    figure: go.Figure, points: pd.DataFrame, name: str, symbol: str = "star", colour: str = "#111111", size: int = 15
) -> go.Figure:
    """A copy of a map with ``points`` drawn on top as large outlined markers (search hits, placed papers).

    ``points``: columns x, y, hover (already escaped HTML) and doc_id (None for papers not in the cache).
    """
    highlighted = go.Figure(figure)
    highlighted.add_trace(
        go.Scattergl(
            x=points["x"].to_numpy(),
            y=points["y"].to_numpy(),
            mode="markers",
            name=name,
            customdata=points["doc_id"].astype(str).to_numpy(),
            hovertext=points["hover"].tolist(),
            hoverinfo="text",
            marker={"size": size, "symbol": symbol, "color": colour, "line": {"width": 1.5, "color": "white"}},
        )
    )
    return highlighted


def _bar_axis_label(topic: int, label: str, max_chars: int = 48) -> str:
    if topic == OUTLIER_TOPIC:
        return OUTLIER_LABEL
    return plotly_escape(f"{topic} · {shorten(label, max_chars)}")


def topic_size_figure(topics: pd.DataFrame, include_outliers: bool = True) -> go.Figure:
    """Horizontal bar chart of topic sizes, largest at the top, each bar in its topic's colour.

    ``topics``: columns topic, label, size. Bars are labelled "id · label" (escaped); the outlier topic, when
    present and ``include_outliers``, is a grey "Outliers" bar at the bottom. Returns the Figure.
    """
    labels = topic_labels(topics)
    rows = topics if include_outliers else topics[topics["topic"] != OUTLIER_TOPIC]
    real = rows[rows["topic"] != OUTLIER_TOPIC].sort_values(["size", "topic"], ascending=[False, True])
    ordered = pd.concat([real, rows[rows["topic"] == OUTLIER_TOPIC]])
    figure = go.Figure(
        go.Bar(
            x=ordered["size"].tolist(),
            y=[_bar_axis_label(int(topic), labels[int(topic)]) for topic in ordered["topic"]],
            orientation="h",
            marker={"color": [topic_colour(int(topic)) for topic in ordered["topic"]]},
            text=ordered["size"].tolist(),
            textposition="outside",
            cliponaxis=False,
            hovertext=[
                f"{plotly_escape(labels[int(topic)])}<br>{int(size)} papers"
                for topic, size in zip(ordered["topic"], ordered["size"])
            ],
            hoverinfo="text",
        )
    )
    figure.update_layout(
        template="plotly_white",
        height=max(260, (26 if len(ordered) <= 30 else 20) * len(ordered) + 110),
        margin={"l": 8, "r": 40, "t": 40, "b": 40},
        title={"text": "Papers per topic", "x": 0, "xanchor": "left", "font": {"size": 16}},
        xaxis={"title": "papers"},
        yaxis={"autorange": "reversed", "automargin": True},
        bargap=0.25,
        font={"family": FONT_FAMILY},
    )
    if ordered.empty:
        _empty_notice(figure, "No topics")
    return figure


NO_TERMS_NOTICE = "No keywords: its papers<br>share no distinctive terms"


def _no_terms_notice(figure: go.Figure, row: int, column: int) -> None:
    """Write NO_TERMS_NOTICE in the middle of the (row, column) panel and hide that panel's empty axes."""
    axes = figure.get_subplot(row, column)
    # In paper coordinates: plotly.js places a "x domain" reference of a hidden axis at the figure's centre.
    x, y = sum(axes.xaxis.domain) / 2, sum(axes.yaxis.domain) / 2
    figure.add_annotation(
        text=NO_TERMS_NOTICE,
        x=x,
        y=y,
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="middle",
        showarrow=False,
        font={"size": 12, "color": "#555"},
    )
    figure.update_xaxes(visible=False, row=row, col=column)
    figure.update_yaxes(visible=False, row=row, col=column)


def top_terms_figure(
    topics: pd.DataFrame, topic_ids: Sequence[int] | Iterable[int], n_terms: int = 8, columns: int = 3
) -> go.Figure:
    """Small multiples of c-TF-IDF weights: one horizontal bar panel per chosen topic, top term at the top.

    ``topics``: columns topic, label, top_terms (list of [term, weight]). ``topic_ids``: topics to draw, in panel
    order (unknown ids are skipped). Shows at most ``n_terms`` terms per topic in ``columns`` panels per row.
    Returns the Figure (a notice when no topic is chosen; a topic without terms gets NO_TERMS_NOTICE in its panel).
    """
    by_id = {int(row.topic): row for row in topics.itertuples(index=False)}
    chosen = [int(topic) for topic in topic_ids if int(topic) in by_id]
    if not chosen:
        figure = go.Figure()
        figure.update_layout(template="plotly_white", height=240, margin={"l": 8, "r": 8, "t": 8, "b": 8})
        _hide_axes(figure)
        return _empty_notice(figure, "Choose one or more topics to see their top terms")
    columns = max(1, min(columns, len(chosen)))
    rows = math.ceil(len(chosen) / columns)
    labels = topic_labels(topics)
    titles = [_bar_axis_label(topic, labels[topic], 32) for topic in chosen]
    panel_height = 230
    gap_px = 70
    figure = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=titles,
        horizontal_spacing=0.14,
        vertical_spacing=gap_px / (rows * panel_height + (rows - 1) * gap_px) if rows > 1 else 0.0,
    )
    for position, topic in enumerate(chosen):
        pairs = [(term, weight) for term, weight in list(by_id[topic].top_terms) if str(term).strip()][:n_terms]
        if not pairs:
            _no_terms_notice(figure, position // columns + 1, position % columns + 1)
            continue
        terms = [plotly_escape(term) for term, _ in pairs]
        weights = [float(weight) for _, weight in pairs]
        figure.add_trace(
            go.Bar(
                x=weights,
                y=terms,
                orientation="h",
                marker={"color": topic_colour(topic)},
                hovertext=[f"{term}<br>c-TF-IDF {weight:.3f}" for term, weight in zip(terms, weights)],
                hoverinfo="text",
                showlegend=False,
            ),
            row=position // columns + 1,
            col=position % columns + 1,
        )
    figure.update_yaxes(autorange="reversed", automargin=True, tickfont={"size": 11})
    figure.update_xaxes(showticklabels=True, tickfont={"size": 9}, nticks=4)
    figure.update_annotations(font={"size": 13})
    figure.update_layout(
        template="plotly_white",
        height=rows * panel_height + (rows - 1) * gap_px + 60,
        margin={"l": 8, "r": 16, "t": 40, "b": 24},
        bargap=0.2,
        font={"family": FONT_FAMILY},
    )
    return figure
