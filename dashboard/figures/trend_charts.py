"""Trend and venue figures: shares per collection with their 95% intervals (dashboard/tables/trends.py tables in,
plotly figures out; no Streamlit)."""

from __future__ import annotations

import math
import textwrap

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.display import plotly_escape, shorten
from dashboard.figures.label_layout import wrap_name

PANELS_PER_ROW = 3  # four panels of 100 px each at 900 px with the sidebar open printed their titles over each other
PANEL_TITLE_CHARS = 22
TITLE_LINE_CHARS = 60  # a centred one-line title was cut on both sides at 900 px
# About this many steps between 0 and the largest share on a share axis. Plotly's own ticks under ".0%" printed
# "2%, 2%, 1%, 1%, 0%" and "0%, 0%, 0%" on the panels of small themes: the ticks are set here instead.
SHARE_TICK_STEPS = 4
ROUND_STEPS = (1.0, 2.0, 5.0, 10.0)
EMPTY_AXIS_END = 0.01  # a panel whose every share is 0 still shows a scale: 0% to 1%


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


def _decimals(percent: float) -> int:
    """The fewest decimals (up to 6) that write ``percent`` exactly: 2.5 -> 1, 0.25 -> 2, 20 -> 0."""
    for decimals in range(7):
        if abs(round(percent, decimals) - percent) < 1e-9 * max(1.0, abs(percent)):
            return decimals
    return 6


def share_ticks(top: float, steps: int = SHARE_TICK_STEPS) -> tuple[list[float], list[str]]:
    """Ticks for a share axis from 0 to at least ``top`` (a share in [0, 1]): a round step (1, 2 or 5 times a
    power of ten) giving ``steps`` steps or fewer, at least 2, each labelled as a percentage with as many decimals as
    the step needs, so no two labels are equal ("0%, 0.5%, 1%" is written "0.0%, 0.5%, 1.0%"). Returns (values,
    texts); the last value is at or above ``top``."""
    top = top if math.isfinite(top) and top > 0 else EMPTY_AXIS_END
    least = top / steps
    power = 10.0 ** math.floor(math.log10(least))
    step = next(factor * power for factor in ROUND_STEPS if factor * power >= least * (1 - 1e-12))
    count = max(2, math.ceil(top / step - 1e-9))
    values = [round(number * step, 12) for number in range(count + 1)]
    decimals = _decimals(step * 100)
    return values, [f"{value * 100:.{decimals}f}%" for value in values]


def share_axis(top: float) -> dict:
    """Plotly axis settings for a share axis from 0 to ``top``: share_ticks's ticks and a range with a little room
    at both ends, so markers and error bars at 0 or at the top are not cut."""
    values, texts = share_ticks(top)
    margin = 0.04 * values[-1]
    return {"tickmode": "array", "tickvals": values, "ticktext": texts, "range": [-margin, values[-1] + margin]}


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
        row, col = number // PANELS_PER_ROW + 1, number % PANELS_PER_ROW + 1
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
            row=row,
            col=col,
        )
        # each panel its own scale (a small theme on the largest one's would be a flat line at 0), ticks set here
        figure.update_yaxes(share_axis(float(part["share_high"].max())), row=row, col=col)
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
        xaxis=share_axis(float(shares["share_high"].max())) if len(shares) else {"tickformat": ".0%"},
        height=max(360, 28 * shares[group].nunique() * max(1, shares["collection"].nunique()) // 2),
        yaxis={"autorange": "reversed", "automargin": True},  # a fixed 320 px left 100 px for the bars at 900 px
        margin={"l": 8, "t": 70},
    )
    return figure


HOLE_COLOUR = "rgba(120, 120, 120, 0.22)"  # the years a venue has no papers in: grey bands behind every panel


def year_ticks(first: int, last: int) -> int:
    """The step between year ticks on an axis from ``first`` to ``last``: 10 over more than 25 years, 5 over more
    than 10, else 1 (forty years of ticks one a year were printed over each other)."""
    span = last - first
    return 10 if span > 25 else 5 if span > 10 else 1


def _runs(years: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive years as (first, last): [2018, 2019, 2020, 2025] -> [(2018, 2020), (2025, 2025)]."""
    runs: list[tuple[int, int]] = []
    for year in sorted(set(years)):
        if runs and year == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], year)
        else:
            runs.append((year, year))
    return runs


def group_order(shares: pd.DataFrame, group: str) -> list:
    """The groups of ``shares`` by their papers, most first, the outliers (-1) last."""
    totals = shares.groupby(group)["papers"].sum().sort_values(ascending=False, kind="stable")
    return [value for value in totals.index if value != -1] + [value for value in totals.index if value == -1]


def _year_trace(part: pd.DataFrame, breaks: list[int]) -> go.Scatter:
    """One panel's line: the shown years' shares with Wilson error bars, broken (a missing value) at ``breaks``."""
    gaps = pd.DataFrame({"year": [year for year in breaks if year not in set(part["year"])]})
    series = pd.concat([part, gaps], ignore_index=True).sort_values("year")
    return go.Scatter(
        x=series["year"],
        y=series["share"],
        mode="lines+markers",
        marker={"size": 4},
        line={"width": 1.5},
        connectgaps=False,
        error_y={
            "type": "data",
            "symmetric": False,
            "array": series["share_high"] - series["share"],
            "arrayminus": series["share"] - series["share_low"],
            "thickness": 1,
            "width": 0,
        },
        customdata=series[["papers", "denominator"]].to_numpy(),
        showlegend=False,
        hovertemplate="%{x}: %{y:.1%} (%{customdata[0]:,} of %{customdata[1]:,} papers)<extra></extra>",
    )


def year_multiples(
    shares: pd.DataFrame, labels: dict[int, str], group: str, denominator: str, holes: list[int] | None = None
) -> go.Figure:
    """One panel per group (largest first, outliers last): its share of each year's papers with the 95% Wilson
    interval, years on a number axis. ``shares``: dashboard.tables.trends_years.year_shares (its shown years only
    are drawn: a thin year is a gap); ``holes``: years a venue has no papers in, shaded grey on every panel and
    breaking the line; ``denominator`` is named in the title."""
    shown = shares[shares["shown"]]
    groups = group_order(shown, group)
    rows = max(1, -(-len(groups) // PANELS_PER_ROW))
    titles = [
        "<br>".join(plotly_escape(line) for line in wrap_name(labels.get(value, str(value)), PANEL_TITLE_CHARS))
        for value in groups
    ]
    figure = make_subplots(
        rows=rows,
        cols=PANELS_PER_ROW,
        subplot_titles=titles,
        vertical_spacing=min(0.3, 0.6 / rows),
        horizontal_spacing=0.08,
    )
    years = sorted(set(shown["year"]) | set(holes or []))
    first, last = (min(years), max(years)) if years else (0, 1)
    breaks = sorted(set(holes or []) | set(shares.loc[~shares["shown"], "year"]))
    for number, value in enumerate(groups):
        part = shown[shown[group] == value]
        row, col = number // PANELS_PER_ROW + 1, number % PANELS_PER_ROW + 1
        figure.add_trace(_year_trace(part, [year for year in breaks if first <= year <= last]), row=row, col=col)
        figure.update_yaxes(share_axis(float(part["share_high"].max())), row=row, col=col)
    figure.update_xaxes(range=[first - 0.8, last + 0.8], dtick=year_ticks(first, last), tickformat="d")
    # one list of shapes: add_vrect(row="all", col="all") took 13 s for 21 panels and 10 runs of years
    figure.update_layout(
        shapes=[
            {
                "type": "rect",
                "xref": f"x{number + 1 if number else ''}",
                "yref": f"y{number + 1 if number else ''} domain",
                "x0": start - 0.5,
                "x1": end + 0.5,
                "y0": 0,
                "y1": 1,
                "fillcolor": HOLE_COLOUR,
                "line": {"width": 0},
                "layer": "below",
            }
            for start, end in _runs([year for year in holes or [] if first <= year <= last])
            for number in range(len(groups))
        ]
    )
    figure.update_annotations(font_size=11)
    grey = "; grey: a venue's missing years" if holes else ""
    title = chart_title(f"Share of each year's papers, 95% Wilson intervals; denominator: {denominator}{grey}")
    # from the top: centred in the margin, its third line sat beside the first panels' names
    title.update({"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 12}})
    figure.update_layout(
        title=title,
        height=max(340, 220 * rows),
        margin={"t": 90 + 18 * title["text"].count("<br>"), "l": 40, "r": 20, "b": 30},
    )
    return figure
