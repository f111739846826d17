"""The Trends view (an atlas of several collections): each theme's or topic's share of every collection's papers
with intervals, the denominator named, what grows, fades or is new between two collections, and acceptance per
collection (tables: dashboard/tables/trends.py; figures: dashboard/figures/trend_charts.py).

A series of years (every venue pooled per year, or one venue's years, six years or more: the ML Anthology's forty)
is drawn on a year axis instead, its thin years left out and named, the years a venue has no papers in shaded and
named beside the chart, with the themes that rose and faded between two periods and the year each appeared
(dashboard/tables/trends_years.py, issue 42)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard.display import topic_labels
from dashboard.figures import trend_charts
from dashboard.state import resources
from dashboard.tables import paper_table, trends, trends_years
from dashboard.tables.collections import collection_options
from dashboard.views.page import PLOTLY_CONFIG, Page
from pipeline.ingest.years import holes_sentence, year_ranges
from pipeline.quality.coverage import canonical_areas, load_crosswalk

GROUP_NAMES = {"theme": "Theme", "topic": "Topic"}


def percent(label: str, help: str | None = None) -> Any:
    """A column of shares in [0, 1] shown as percentages."""
    return st.column_config.NumberColumn(label, format="percent", help=help)


def named_columns(group: str) -> dict[str, Any]:
    """The name and id columns of a table of themes or topics: "Theme" (its label) and "Theme id"."""
    name = GROUP_NAMES.get(group, group.capitalize())
    return {
        "label": st.column_config.TextColumn(name, width="large"),
        group: st.column_config.NumberColumn(f"{name} id", format="%d", width="small"),
    }


def share_ratio_columns(earlier: str, later: str) -> dict[str, Any]:
    """The column settings a rising-and-fading table shares: each period's share, their ratio with its 95% interval
    and the p-value; ``earlier`` and ``later`` name the periods."""
    return {
        "share_earlier": percent(f"Share {earlier}"),
        "share_later": percent(f"Share {later}"),
        "ratio": st.column_config.NumberColumn(
            "Share ratio", format="%.2f", help=f"share in {later} / share in {earlier}"
        ),
        "ratio_low": st.column_config.NumberColumn("Ratio (95% low)", format="%.2f"),
        "ratio_high": st.column_config.NumberColumn("Ratio (95% high)", format="%.2f"),
        "p_text": st.column_config.TextColumn("p-value", help="two-sided, pooled two-proportion z-test"),
    }


def changes_columns(group: str, first: str, last: str) -> tuple[list[str], dict[str, Any]]:
    """The changes table's columns (trends.share_changes plus ``label`` and ``p_text``) in order, and their
    headers and formats: names first, the id last."""
    order = [
        "label",
        "status",
        "papers_earlier",
        "papers_later",
        "share_earlier",
        "share_later",
        "ratio",
        "ratio_low",
        "ratio_high",
        "p_text",
        "later_fraction",
        group,
    ]
    config = {
        **named_columns(group),
        "status": st.column_config.TextColumn("Change", help="growing, fading, new or steady"),
        "papers_earlier": st.column_config.NumberColumn(f"Papers {first}", format="%d"),
        "papers_later": st.column_config.NumberColumn(f"Papers {last}", format="%d"),
        **share_ratio_columns(first, last),
        "later_fraction": percent(
            f"Of its papers, in {last}", help=f"its papers in {last} over its papers in both, not scaled by size"
        ),
    }
    return order, config


def acceptance_columns(group: str, acceptance: pd.DataFrame) -> tuple[list[str], dict[str, Any]]:
    """The acceptance table's columns (trends.acceptance_by_collection plus ``label``) in order, with headers."""
    order = ["label", "collection", "submissions", "accepted", "unknown", "rate", "rate_low", "rate_high"]
    order += ["rating_mean"] if "rating_mean" in acceptance.columns else []
    config = {
        **named_columns(group),
        "collection": st.column_config.TextColumn("Collection"),
        "submissions": st.column_config.NumberColumn("Submissions", format="%d"),
        "accepted": st.column_config.NumberColumn("Accepted", format="%d"),
        "unknown": st.column_config.NumberColumn("No decision", format="%d"),
        "rate": percent("Acceptance"),
        "rate_low": percent("Acceptance (95% low)"),
        "rate_high": percent("Acceptance (95% high)"),
        "rating_mean": st.column_config.NumberColumn("Mean rating", format="%.2f"),
    }
    return [*order, group], config


def grouped(page: Page, level: str) -> tuple[pd.DataFrame, dict[int, str], str]:
    """The atlas's documents with the group column (``theme`` or ``topic``), its labels, and the column's name."""
    documents, topics = page.atlas.documents, page.atlas.topics
    if level == "theme" and "theme" in topics.columns:
        themes = topics.set_index("topic")["theme"]
        labels = dict(zip(topics["theme"], topics["theme_label"]))
        return documents.assign(theme=documents["topic"].map(themes).fillna(-1).astype(int)), labels, "theme"
    return documents, topic_labels(topics), "topic"


ALL_VENUES = "All venues, per year"
# More venues than this, and the view opens on every venue pooled per year.
MANY_VENUES = 3
# A table of themes shows this many rows before it scrolls.
TABLE_ROWS = 21


def _year(name: str) -> int | None:
    """The year a collection's name ends with, None when none."""
    last = name.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else None


def _year_name(year: object) -> str | None:
    """A year as the pooled collection's name ("2019"), None when missing or unreadable."""
    try:
        return str(int(float(str(year))))
    except ValueError:
        return None


def show_holes(holes: dict[str, list[int]]) -> None:
    """A warning naming the years a venue has no papers in although its cadence says it met (missing from the data,
    or a year it did not meet: pipeline.ingest.years), when there are any."""
    if holes:
        st.warning(paper_table.markdown_escape(holes_sentence(holes)), icon="⚠️")


def narrow_label(group: str) -> dict[str, Any]:
    """The name column at medium width: at 900 px a large one left the shares beyond the table's right edge."""
    return {"label": st.column_config.TextColumn(GROUP_NAMES.get(group, group.capitalize()), width="medium")}


def period_columns(group: str, earlier: str, later: str) -> tuple[list[str], dict[str, Any]]:
    """The rising and fading table's columns (trends_years.period_changes plus ``label`` and ``p_text``) in
    order, with their headers: names first, the id last."""
    order = ["label", "status", "share_earlier", "share_later", "ratio", "ratio_low", "ratio_high", "p_text"]
    config = {
        **named_columns(group),
        **narrow_label(group),
        "status": st.column_config.TextColumn("Change", help="rising, fading, new (no paper before) or steady"),
        **share_ratio_columns(earlier, later),
        "papers_earlier": st.column_config.NumberColumn(f"Papers {earlier}", format="%d"),
        "papers_later": st.column_config.NumberColumn(f"Papers {later}", format="%d"),
    }
    return [*order, "papers_earlier", "papers_later", group], config


def appearance_columns(group: str) -> tuple[list[str], dict[str, Any]]:
    """The first-appearance table's columns (trends_years.first_appearance plus ``label``), with headers."""
    year = "%d"
    config = {
        **named_columns(group),
        **narrow_label(group),
        "appears": st.column_config.NumberColumn(
            "Appears",
            format=year,
            help=f"first year with {trends_years.APPEAR_PAPERS}+ papers and a share whose 95% interval's lower "
            f"end is {trends_years.APPEAR_SHARE:.0%} or more",
        ),
        "first_paper": st.column_config.NumberColumn("First paper", format=year),
        "half_peak": st.column_config.NumberColumn(
            "Half its peak", format=year, help="first year whose share's lower end reached half its peak share"
        ),
        "peak_year": st.column_config.NumberColumn("Peak year", format=year),
        "peak_share": percent("Peak share"),
        "peak_low": percent("Peak (95% low)"),
        "peak_high": percent("Peak (95% high)"),
        "papers": st.column_config.NumberColumn("Papers", format="%d"),
    }
    order = ["label", "appears", "first_paper", "half_peak", "peak_year", "peak_share", "peak_low", "peak_high"]
    return [*order, "papers", group], config


def _years_listed(years: dict[int, int]) -> str:
    """ "1985 (37 papers), 1986 (49)"."""
    return ", ".join(
        f"{year} ({count:,} papers)" if index == 0 else f"{year} ({count:,})"
        for index, (year, count) in enumerate(years.items())
    )


def left_out_note(thin: dict[int, int], partial: dict[int, int]) -> str:
    """The caption naming the years left out of the chart and the measures: too few papers, or just begun."""
    notes = []
    if thin:
        notes.append(
            f"years with fewer than {trends_years.MIN_YEAR_PAPERS} papers, {_years_listed(thin)}: a share of so "
            "few papers has an interval too wide to say anything"
        )
    if partial:
        notes.append(
            f"the year just begun, {_years_listed(partial)}: fewer than half the year before's, its few venues so "
            "far are not the year's mix"
        )
    return f"Left out of the chart and the measures: {'; '.join(notes)}." if notes else ""


def table_height(rows: int) -> int:
    """A table's height in pixels: every row up to TABLE_ROWS (the twenty themes of a forty-year atlas, fading
    ones included), then it scrolls."""
    return 38 + 35 * min(rows, TABLE_ROWS)


def render_rising_fading(shares: pd.DataFrame, labels: dict[int, str], group: str, venue: str) -> None:
    """The rising and fading themes between two periods the user picks (the first and last decade by default),
    with the share ratio's interval, and when each appeared (dashboard.tables.trends_years)."""
    years = trends_years.shown_years(shares)
    if len(years) < trends_years.MIN_SERIES_YEARS:
        return
    st.markdown("**Rising and fading**")
    earlier, later = trends_years.default_periods(years)
    left, right = st.columns(2)
    first = left.select_slider("Earlier years", options=years, value=earlier, key=f"trend_earlier-{venue}")
    last = right.select_slider("Later years", options=years, value=later, key=f"trend_later-{venue}")
    try:
        changes = trends_years.period_changes(shares, group, first, last)
    except ValueError as error:
        st.info(f"Nothing to compare: {error}. Pick two periods apart.")
    else:
        names = trends_years.period_name(first), trends_years.period_name(last)
        changes.insert(1, "label", changes[group].map(labels))
        changes["p_text"] = changes["p_value"].map(trends.p_value_text)
        st.caption(
            f"Each share over all the papers of {names[0]} pooled, then of {names[1]}; share ratio (later / earlier) "
            "with Katz's 95% interval. Rising: the interval above 1; fading: below 1; new: no paper before."
        )
        show_table(changes, *period_columns(group, *names), key="trend-periods")
    st.markdown("**When each appeared**")
    appearance = trends_years.first_appearance(shares, group)
    appearance.insert(1, "label", appearance[group].map(labels))
    st.caption(
        f"Appears: the first year it has {trends_years.APPEAR_PAPERS} papers or more and a share whose 95% interval "
        f"starts at {trends_years.APPEAR_SHARE:.0%} or more (a year's few papers cannot fake it); over the years "
        "shown. A theme's earliest papers are often older work its words happen to fit."
    )
    show_table(appearance, *appearance_columns(group), key="trend-appearance")


def show_table(table: pd.DataFrame, order: list[str], config: dict[str, Any], key: str) -> None:
    """``table`` as the Trends view's tables are shown: no index, ``order``'s columns configured by ``config``, as
    tall as its rows (table_height)."""
    st.dataframe(
        table, hide_index=True, column_order=order, column_config=config, key=key, height=table_height(len(table))
    )


def render_years(page: Page, documents: pd.DataFrame, series: dict[str, int], context: dict[str, Any]) -> None:
    """The Trends view of a series of years (every venue pooled per year, or one venue's years): shares per year
    with intervals and the holes shaded, the thin years named, rising and fading themes and first appearances."""
    group, labels, venue = context["group"], context["labels"], context["venue"]
    one = None if venue == ALL_VENUES else venue
    papers = resources.venue_year_papers(page.cache_key, page.atlas)  # counted once for the holes and the swings
    holes = trends_years.series_holes(page.atlas.documents, one, papers=papers)
    show_holes(holes)
    shaded = holes if one else trends_years.series_holes(page.atlas.documents, None, trends_years.SHADE_SHARE, papers)
    dated = documents.assign(year=documents["collection"].map(series))
    shares = trends_years.year_shares(dated, group, context["mask"])
    figure = trend_charts.year_multiples(shares, labels, group, context["denominator"], trends_years.hole_years(shaded))
    st.plotly_chart(figure, theme=None, config=PLOTLY_CONFIG, key="trend-multiples")
    page.figures["trend-multiples"] = ("Shares per year", figure)
    left_out = left_out_note(trends_years.thin_years(shares), trends_years.thin_years(shares, partial=True))
    notes = [left_out] if left_out else []
    if shaded:
        weight = "" if one else f" whose missing meetings would have held {trends_years.SHADE_SHARE:.0%} of it or more"
        listed = ", ".join(f"{name} {year_ranges(years)}" for name, years in shaded.items())
        notes.append(f"Grey bands: the years{weight} ({listed}); a share there moves for want of those papers.")
    alternating = {} if one else trends_years.series_alternating(page.atlas.documents, papers)
    if alternating:
        listed = ", ".join(f"{name} ({parity} years)" for name, parity in alternating.items())
        notes.append(
            f"Every other year: {listed} meet only then and hold 5% or more of those years' papers, so the shares "
            "of their themes swing between even and odd years; read such a theme two years at a time."
        )
    if notes:
        st.caption(" ".join(notes))
    render_rising_fading(shares, labels, group, venue)


def render_collections(page: Page, documents: pd.DataFrame, chosen: list[str], context: dict[str, Any]) -> None:
    """The Trends view of a few collections: shares per collection with intervals, and what grows, fades or is new
    between two of them."""
    group, labels, venue = context["group"], context["labels"], context["venue"]
    papers = resources.venue_year_papers(page.cache_key, page.atlas)
    show_holes(trends_years.series_holes(page.atlas.documents, None if venue == ALL_VENUES else venue, papers=papers))
    shares = trends.collection_shares(documents, group, context["mask"])
    figure = trend_charts.small_multiples(shares, labels, group, context["denominator"])
    st.plotly_chart(figure, theme=None, config=PLOTLY_CONFIG, key="trend-multiples")
    page.figures["trend-multiples"] = ("Shares per collection", figure)
    if len(chosen) < 2:
        return
    earlier, later = st.columns(2)
    first = earlier.selectbox("From", chosen, index=0, key="trend_from")
    last = later.selectbox("To", chosen, index=len(chosen) - 1, key="trend_to")
    if first != last:
        changes = trends.share_changes(shares, first, last, group)
        changes.insert(1, "label", changes[group].map(labels))
        st.caption(
            "Share ratio (to / from) with Katz's 95% interval; growing: the interval above 1, fading: below 1, "
            "new: share at least doubled (mostly the later collection's, once both are scaled to one size), "
            "interval above 1."
        )
        changes["p_text"] = changes["p_value"].map(trends.p_value_text)
        order, config = changes_columns(group, first, last)
        st.dataframe(changes, hide_index=True, column_order=order, column_config=config, key="trend-changes")


def render(page: Page) -> None:
    """Draw the Trends view; its figure goes into ``page.figures`` for the downloads."""
    names = collection_options(page.atlas.documents)  # venue by venue, years in order
    left, right = st.columns(2)
    level = left.radio("Group by", ["theme", "topic"], horizontal=True, key="trend_level")
    venues = sorted({name.split(" ")[0] for name in names})
    pooled = len(venues) > 1 and len({_year(name) for name in names} - {None}) > 1
    options = venues + ([ALL_VENUES] if pooled else [])
    # a file of many venues (the ML Anthology's 21) opens on every venue pooled: its forty years, not one venue's
    default = len(options) - 1 if pooled and len(venues) > MANY_VENUES else 0
    venue = right.selectbox("Venue", options, index=default, key="trend_venue")
    # on a line of its own: in a third of the page its label was cut to "Only primary …" at 900 px
    common = st.toggle("Only primary areas present in every year", key="trend_common_areas")
    documents, labels, group = grouped(page, level)
    if venue == ALL_VENUES:  # one collection a year: every venue's papers of that year
        documents = documents.assign(collection=documents["year"].map(_year_name))
        chosen = sorted({name for name in documents["collection"].dropna()})
        st.caption(
            "Every venue pooled per year: a year's share mixes the venues of that year, and a venue missing from a "
            "year (named below) moves every share of that year."
        )
    else:
        chosen = [name for name in names if name.split(" ")[0] == venue]
    mask = documents["collection"].isin(chosen)
    denominator = f"all papers of each {venue} collection" if venue != ALL_VENUES else "all papers of each year"
    if common and "primary_area" in documents.columns:
        areas = canonical_areas(documents, load_crosswalk())
        mask &= trends.common_area_mask(documents, chosen, areas)
        denominator = f"the {venue} papers in primary areas present in every year ({int(mask.sum()):,} papers)"
    st.caption(
        f"Denominator: {denominator}. Coverage warnings at the top of the page name collections with holes; "
        "a share there is not a trend."
    )
    context = {"group": group, "labels": labels, "venue": venue, "mask": mask, "denominator": denominator}
    series = trends_years.series_years(chosen)
    if series:
        render_years(page, documents, series, context)
    else:
        render_collections(page, documents, chosen, context)
    acceptance = trends.acceptance_by_collection(documents[documents["collection"].isin(chosen)], group)
    if not acceptance.empty and venue != ALL_VENUES:  # never pooled across venues (issue 40, item 1)
        acceptance.insert(1, "label", acceptance[group].map(labels))
        st.caption(
            "Acceptance = accepted / all submissions, 95% Wilson interval. An unknown decision (ICLR 2024 and 2026: "
            "rejected and withdrawn cannot be told apart) is a submission, never a reject."
        )
        order, config = acceptance_columns(group, acceptance)
        st.dataframe(acceptance, hide_index=True, column_order=order, column_config=config, key="trend-acceptance")
