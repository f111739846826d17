"""Figures of per-topic review analytics. Pure: tables from :mod:`dashboard.tables.analytics` in, plotly Figure out.

Every chart has one row per topic, ordered by rank, and grows in height with the number of topics, so 60
topics over the 11,672 ICLR 2025 submissions stay readable. Topic labels go through
:func:`dashboard.display.plotly_escape` (plotly renders a subset of HTML in tick labels and hover text).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.display import plotly_escape
from pipeline.ingest.decisions import DECISION_ORDER

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


NO_PAPER = "No paper to count: no paper matches the filters here."


def topic_names(table: pd.DataFrame) -> list[str]:
    """The y labels of both decision charts, bottom to top: "<label> (n=<papers>)", ``size`` being the topic's
    papers the table counts, so the mix and the rate chart name each topic with the same count."""
    rows = table.iloc[::-1]
    return [f"{_short(label)} (n={int(size)})" for label, size in zip(rows["label"], rows["size"])]


def no_paper_figure(title: str, message: str = NO_PAPER) -> go.Figure:
    """A chart of nothing: its title and ``message``, no axes (not plotly's empty axes from -1 to 4)."""
    figure = go.Figure()
    figure.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False)
    figure.update_layout(
        height=200,
        xaxis=dict(visible=False),
        yaxis=dict(visible=False),
        margin=dict(l=10, r=10, t=40, b=10),
        title={"text": title, "x": 0, "xanchor": "left"},
    )
    return figure


def decision_mix_figure(table: pd.DataFrame, counts: bool = False) -> go.Figure:
    """Horizontal stacked bars of each decision among a topic's papers, hover with counts: shares (100 % bars), or
    with ``counts`` the papers themselves (where a share would mislead: under a decision filter).

    ``table`` is :func:`dashboard.tables.analytics.acceptance_table` or ``count_table`` output (rows in display
    order, first at the top); ``size`` is the papers each bar counts. No row: :func:`no_paper_figure`.
    """
    title = "Papers per topic and decision" if counts else "Decision mix per topic"
    if table.empty or int(table["size"].sum()) == 0:
        return no_paper_figure(title)
    rows = table.iloc[::-1]  # plotly draws the first category at the bottom
    names = topic_names(table)
    figure = go.Figure()
    for decision in [*DECISION_ORDER, "Unknown"]:
        if decision not in rows.columns or rows[decision].sum() == 0:
            continue
        share = rows[decision] / rows["size"].where(rows["size"] > 0)
        figure.add_trace(
            go.Bar(
                y=names,
                x=rows[decision] if counts else share,
                name=decision,
                orientation="h",
                marker_color=DECISION_COLOURS[decision],
                customdata=rows[decision] if counts else list(zip(rows[decision], share)),
                hovertemplate=(
                    f"%{{y}}<br>{decision}: %{{x}} papers<extra></extra>"
                    if counts
                    else f"%{{y}}<br>{decision}: %{{customdata[0]}} papers (%{{customdata[1]:.0%}})<extra></extra>"
                ),
            )
        )
    xaxis = (
        dict(title="papers", rangemode="tozero")
        if counts
        else dict(tickformat=".0%", title="share of the topic's papers", range=[0, 1])
    )
    figure.update_layout(
        barmode="stack",
        height=_height(len(rows)),
        xaxis=xaxis,
        yaxis=dict(automargin=True),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
        margin=dict(l=10, r=10, t=80, b=40),  # the title above the legend, never under it
        title={"text": title, "x": 0, "xanchor": "left", "y": 0.995, "yanchor": "top"},
    )
    return figure


def acceptance_rate_figure(table: pd.DataFrame, overall: dict[str, float], reference: str = "all papers") -> go.Figure:
    """Acceptance rate per topic as a dot with its 95 % Wilson interval, and ``overall`` (the rate of the papers
    named by ``reference``: the atlas's, or one collection's) as a line.

    Topics with fewer than 30 decided papers are drawn hollow and marked "small" in the hover text. Each topic is
    named as in :func:`decision_mix_figure` ("(n=papers)", the same papers; the hover gives the decided ones the
    rate is over). No topic with a decided paper: :func:`no_paper_figure`.
    """
    rated = table.dropna(subset=["rate"])
    if rated.empty:
        return no_paper_figure("Acceptance rate per topic", "No decided paper: no acceptance rate to draw here.")
    rows = rated.iloc[::-1]
    names = topic_names(rated)
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
            annotation_text=f"{plotly_escape(reference)}: {overall['rate']:.0%} of {overall['decided']:,}",
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
