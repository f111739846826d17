"""Figures of per-topic review analytics. Pure: tables from :mod:`dashboard.tables.analytics` in, plotly Figure out.

Every chart has one row per topic, ordered by rank, and grows in height with the number of topics, so 60
topics over the 11,672 ICLR 2025 submissions stay readable. Topic labels go through
:func:`dashboard.display.plotly_escape` (plotly renders a subset of HTML in tick labels and hover text).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.display import plotly_escape
from dashboard.tables.analytics import DECISION_ORDER

DECISION_COLOURS = {
    "Oral": "#1b7837",
    "Spotlight": "#5aae61",
    "Poster": "#a6dba0",
    "Reject": "#d6604d",
    "Desk Rejected": "#8c2d04",
    "Withdrawn": "#bababa",
    "Unknown": "#eeeeee",
}
ROW_HEIGHT_PX = 22


def _height(n_rows: int) -> int:
    return max(320, 120 + ROW_HEIGHT_PX * n_rows)


def _short(label: str, limit: int = 48) -> str:
    label = str(label)
    return plotly_escape(label if len(label) <= limit else label[: limit - 1] + "…")


def decision_mix_figure(table: pd.DataFrame) -> go.Figure:
    """Horizontal 100 % stacked bars: share of each decision among a topic's papers, hover with counts.

    ``table`` is :func:`dashboard.tables.analytics.acceptance_table` output (rows in display order, best first).
    """
    rows = table.iloc[::-1]  # plotly draws the first category at the bottom
    names = [f"{_short(label)} (n={size})" for label, size in zip(rows["label"], rows["size"])]
    figure = go.Figure()
    for decision in DECISION_ORDER + ["Unknown"]:
        if decision not in rows.columns or rows[decision].sum() == 0:
            continue
        share = rows[decision] / rows["size"].where(rows["size"] > 0)
        figure.add_trace(
            go.Bar(
                y=names,
                x=share,
                name=decision,
                orientation="h",
                marker_color=DECISION_COLOURS[decision],
                customdata=rows[decision],
                hovertemplate=f"%{{y}}<br>{decision}: %{{customdata}} papers (%{{x:.0%}})<extra></extra>",
            )
        )
    figure.update_layout(
        barmode="stack",
        height=_height(len(rows)),
        xaxis=dict(tickformat=".0%", title="share of the topic's papers", range=[0, 1]),
        yaxis=dict(automargin=True),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
        margin=dict(l=10, r=10, t=80, b=40),  # the title above the legend, never under it
        title={"text": "Decision mix per topic", "x": 0, "xanchor": "left", "y": 0.995, "yanchor": "top"},
    )
    return figure


def acceptance_rate_figure(table: pd.DataFrame, overall: dict[str, float]) -> go.Figure:
    """Acceptance rate per topic as a dot with its 95 % Wilson interval, and the corpus-wide rate as a line.

    Topics with fewer than 30 decided papers are drawn hollow and marked "small" in the hover text.
    """
    rows = table.dropna(subset=["rate"]).iloc[::-1]
    names = [f"{_short(label)} (n={decided})" for label, decided in zip(rows["label"], rows["decided"])]
    hover = [
        f"{_short(label, 80)}<br>{accepted} accepted of {decided} decided ({rate:.0%}, 95% CI {low:.0%}–{high:.0%})"
        f"<br>{withdrawn} withdrawn{'<br>small topic: read with care' if small else ''}"
        for label, accepted, decided, rate, low, high, withdrawn, small in zip(
            rows["label"],
            rows["accepted"],
            rows["decided"],
            rows["rate"],
            rows["rate_low"],
            rows["rate_high"],
            rows["withdrawn"],
            rows["small"],
        )
    ]
    figure = go.Figure(
        go.Scatter(
            x=rows["rate"],
            y=names,
            mode="markers",
            marker=dict(
                size=9, color="#2166ac", symbol=["circle-open" if small else "circle" for small in rows["small"]]
            ),
            error_x=dict(
                type="data",
                symmetric=False,
                array=rows["rate_high"] - rows["rate"],
                arrayminus=rows["rate"] - rows["rate_low"],
                color="#92c5de",
            ),
            hovertext=hover,
            hoverinfo="text",
            name="topic",
        )
    )
    if overall.get("decided"):
        figure.add_vline(
            x=overall["rate"],
            line_dash="dash",
            line_color="#b2182b",
            annotation_text=f"all papers: {overall['rate']:.0%} of {overall['decided']}",
            annotation_position="top",
        )
    figure.update_layout(
        height=_height(len(rows)),
        xaxis=dict(
            tickformat=".0%",
            # two short lines: one long line was cut on both sides at 900 px with the sidebar open
            title="acceptance rate with 95% Wilson interval<br>(Oral + Spotlight + Poster over decided)",
            range=[0, 1],
        ),
        yaxis=dict(automargin=True),
        margin=dict(l=10, r=10, t=80, b=70),
        showlegend=False,
        title={
            "text": "Acceptance rate per topic<br><sup>ranked by the interval's lower end;<br>"
            "hollow: under 30 decided papers</sup>",
            "x": 0,
            "xanchor": "left",
        },
    )
    return figure


def rating_figure(documents: pd.DataFrame, topics: pd.DataFrame) -> go.Figure:
    """Box plot of ``rating_mean`` per topic, topics ordered by mean rating (best at the top)."""
    rated = documents.dropna(subset=["rating_mean"])
    labels = dict(zip(topics["topic"], topics["label"]))
    order = rated.groupby("topic")["rating_mean"].mean().sort_values().index
    figure = go.Figure()
    for topic in order:
        values = rated.loc[rated["topic"] == topic, "rating_mean"]
        figure.add_trace(
            go.Box(
                x=values,
                name=f"{_short(labels.get(topic, topic))} (n={len(values)})",
                marker_color="#4393c3",
                boxmean=True,
                showlegend=False,
            )
        )
    figure.update_layout(
        height=_height(len(order)),
        xaxis_title="mean reviewer rating",
        margin=dict(l=10, r=10, t=40, b=40),
        title="Reviewer ratings per topic",
    )
    return figure
